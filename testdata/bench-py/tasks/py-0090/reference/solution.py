# ruff: noqa
def lcm(a, b):
    """Least common multiple of the positive integers a and b."""
    import math
    return a * b // math.gcd(a, b)
