# ruff: noqa
def nearest_square(n):
    """The perfect square closest to n >= 0 (the smaller one on ties)."""
    import math
    r = math.isqrt(n)
    lo, hi = r * r, (r + 1) * (r + 1)
    return lo if n - lo <= hi - n else hi
