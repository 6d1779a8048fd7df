# ruff: noqa
def balanced(s):
    """True when (), [] and {} in s are balanced; other characters are ignored."""
    return all(s.count(o) == s.count(c) for o, c in ('()', '[]', '{}'))
