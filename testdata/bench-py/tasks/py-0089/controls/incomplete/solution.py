# ruff: noqa
def gcd_list(xs):
    """Greatest common divisor of all numbers in xs (0 for an empty list)."""
    import math
    r = xs[0]
    for x in xs:
        r = math.gcd(r, x)
    return r
