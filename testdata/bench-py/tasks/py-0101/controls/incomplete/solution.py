# ruff: noqa
def count_upper(s):
    """Number of upper-case letters in s."""
    return sum(1 for c in s if 'A' <= c <= 'Z')
