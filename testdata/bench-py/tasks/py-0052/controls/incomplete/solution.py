# ruff: noqa
def median(xs):
    """Median of a non-empty list (the mean of the middle two for even lengths)."""
    return sorted(xs)[len(xs) // 2]
