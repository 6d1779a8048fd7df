def gcd_list(xs):
    """Greatest common divisor of all numbers in xs (0 for an empty list)."""
    raise NotImplementedError
