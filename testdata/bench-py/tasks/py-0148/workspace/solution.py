def regex_match(s, p):
    """Full match of s against pattern p with '.' (any character) and '*' (zero or more of the previous)."""
    raise NotImplementedError
