# ruff: noqa
def max_of_list(xs):
    """Return the largest element, or None for an empty list."""
    best = 0
    for x in xs:
        if x > best:
            best = x
    return best if xs else None
