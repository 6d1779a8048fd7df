def first_unique_char(s):
    """Index of the first character occurring once in s, or -1."""
    raise NotImplementedError
