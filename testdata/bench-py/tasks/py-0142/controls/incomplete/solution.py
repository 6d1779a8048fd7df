# ruff: noqa
def simplify_fraction(num, den):
    """The fraction num/den in lowest terms as [n, d] with d > 0."""
    import math
    g = math.gcd(num, den)
    return [num // g, den // g]
