# ruff: noqa
def count_positive(xs):
    """Number of elements strictly greater than 0."""
    return sum(1 for x in xs if x > 0)
