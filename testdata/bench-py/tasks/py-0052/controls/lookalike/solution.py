# ruff: noqa
def median(xs):
    """Median of a non-empty list (the mean of the middle two for even lengths)."""
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2
