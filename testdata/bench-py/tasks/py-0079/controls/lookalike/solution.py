# ruff: noqa
def swap_case(s):
    """Swap upper and lower case letters; other characters unchanged."""
    return s.swapcase() if s.isalpha() else s
