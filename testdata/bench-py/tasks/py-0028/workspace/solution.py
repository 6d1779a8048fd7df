def lcp(strs):
    """Longest common prefix of a list of strings ('' for an empty list)."""
    raise NotImplementedError
