# ruff: noqa
def gcd(a, b):
    """Greatest common divisor of |a| and |b| (gcd(0, 0) == 0)."""
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a
