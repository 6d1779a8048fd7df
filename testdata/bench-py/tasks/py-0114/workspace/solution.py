def roman_valid(s):
    """True when s is a canonical Roman numeral for 1..3999 (upper-case)."""
    raise NotImplementedError
