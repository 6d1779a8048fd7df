def sum_digits(n):
    """Return the sum of the decimal digits of |n|."""
    raise NotImplementedError
