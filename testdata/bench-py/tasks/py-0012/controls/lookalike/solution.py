# ruff: noqa
def gcd(a, b):
    """Greatest common divisor of |a| and |b| (gcd(0, 0) == 0)."""
    a, b = abs(a), abs(b)
    for d in range(min(a, b), 0, -1):
        if a % d == 0 and b % d == 0:
            return d
    return 1
