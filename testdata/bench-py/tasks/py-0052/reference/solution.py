# ruff: noqa
def median(xs):
    """Median of a non-empty list (the mean of the middle two for even lengths)."""
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
