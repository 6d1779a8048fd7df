def roman_to_int(s):
    """Convert a Roman numeral to an int."""
    raise NotImplementedError
