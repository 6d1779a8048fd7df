# ruff: noqa
def regex_match(s, p):
    """Full match of s against pattern p with '.' (any character) and '*' (zero or more of the previous)."""
    import functools
    @functools.lru_cache(None)
    def m(i, j):
        if j == len(p):
            return i == len(s)
        first = i < len(s) and p[j] in (s[i], '.')
        if j + 1 < len(p) and p[j + 1] == '*':
            return m(i, j + 2) or (first and m(i + 1, j))
        return first and m(i + 1, j + 1)
    return m(0, 0)
