# ruff: noqa
def first_unique_char(s):
    """Index of the first character occurring once in s, or -1."""
    for i, c in enumerate(s):
        if s.lower().count(c.lower()) == 1:
            return i
    return -1
