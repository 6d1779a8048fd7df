def swap_case(s):
    """Swap upper and lower case letters; other characters unchanged."""
    raise NotImplementedError
