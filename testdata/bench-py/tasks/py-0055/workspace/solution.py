def prime_factors(n):
    """Prime factors of n >= 1 in ascending order, with multiplicity."""
    raise NotImplementedError
