# ruff: noqa
def alternate_case(s):
    """Upper-case the characters at even indices and lower-case the others."""
    return ''.join(c.upper() if i % 2 == 0 else c for i, c in enumerate(s))
