def count_upper(s):
    """Number of upper-case letters in s."""
    raise NotImplementedError
