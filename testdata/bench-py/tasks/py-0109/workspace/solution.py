def count_substring(s, sub):
    """Occurrences of sub in s, overlapping ones included ('aaa', 'aa' -> 2)."""
    raise NotImplementedError
