# ruff: noqa
def lcp(strs):
    """Longest common prefix of a list of strings ('' for an empty list)."""
    if not strs:
        return ''
    p = strs[0]
    for s in strs[1:]:
        while not s.startswith(p):
            p = p[:-1]
    return p
