# ruff: noqa
def swap_case(s):
    """Swap upper and lower case letters; other characters unchanged."""
    return ''.join(c.lower() if c.isupper() else c.upper() for c in s)
