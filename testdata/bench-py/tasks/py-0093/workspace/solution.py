def alternate_case(s):
    """Upper-case the characters at even indices and lower-case the others."""
    raise NotImplementedError
