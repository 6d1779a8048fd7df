def char_frequency(s):
    """A dict from each character of s to its count."""
    raise NotImplementedError
