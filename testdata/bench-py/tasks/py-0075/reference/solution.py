# ruff: noqa
def min_max(xs):
    """Return [min, max] of a non-empty list."""
    return [min(xs), max(xs)]
