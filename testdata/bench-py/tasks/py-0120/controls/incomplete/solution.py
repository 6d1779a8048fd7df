# ruff: noqa
def nearest_square(n):
    """The perfect square closest to n >= 0 (the smaller one on ties)."""
    import math
    r = math.isqrt(n)
    return r * r
