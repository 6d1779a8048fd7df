def digits_of(n):
    """The decimal digits of |n| as a list of ints, most significant first."""
    raise NotImplementedError
