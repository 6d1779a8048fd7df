def simplify_fraction(num, den):
    """The fraction num/den in lowest terms as [n, d] with d > 0."""
    raise NotImplementedError
