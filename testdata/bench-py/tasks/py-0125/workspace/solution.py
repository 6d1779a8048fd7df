def happy_number(n):
    """True when repeatedly summing the squares of the digits of n >= 1 reaches 1."""
    raise NotImplementedError
