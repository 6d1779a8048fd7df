# ruff: noqa
def product(xs):
    """Product of the numbers in xs (1 for an empty list)."""
    import math
    return abs(math.prod(xs))
