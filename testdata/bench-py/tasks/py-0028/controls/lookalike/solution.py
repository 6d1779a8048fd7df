# ruff: noqa
def lcp(strs):
    """Longest common prefix of a list of strings ('' for an empty list)."""
    if len(strs) < 2:
        return strs[0] if strs else ''
    a, b = strs[0], strs[1]
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[:i]
