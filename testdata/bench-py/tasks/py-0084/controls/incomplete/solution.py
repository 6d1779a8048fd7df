# ruff: noqa
def product(xs):
    """Product of the numbers in xs (1 for an empty list)."""
    import math
    return math.prod(xs) if xs else 0
