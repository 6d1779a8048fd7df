# ruff: noqa
def simplify_fraction(num, den):
    """The fraction num/den in lowest terms as [n, d] with d > 0."""
    import math
    g = math.gcd(num, den)
    n, d = num // g, den // g
    return [-n, -d] if d < 0 else [n, d] if n else [0, den]
