# ruff: noqa
def count_substring(s, sub):
    """Occurrences of sub in s, overlapping ones included ('aaa', 'aa' -> 2)."""
    return s.count(sub)
