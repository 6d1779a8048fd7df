# ruff: noqa
def count_substring(s, sub):
    """Occurrences of sub in s, overlapping ones included ('aaa', 'aa' -> 2)."""
    return sum(1 for i in range(len(s) - len(sub) + 1) if s[i:i + len(sub)] == sub)
