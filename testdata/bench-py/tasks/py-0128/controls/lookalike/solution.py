# ruff: noqa
def first_unique_char(s):
    """Index of the first character occurring once in s, or -1."""
    for i, c in enumerate(s[:-1]):
        if s.count(c) == 1:
            return i
    return -1
