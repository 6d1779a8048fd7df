# ruff: noqa
def max_of_list(xs):
    """Return the largest element, or None for an empty list."""
    return max(xs) if xs else None
