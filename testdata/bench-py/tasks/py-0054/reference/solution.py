# ruff: noqa
def camel_to_snake(s):
    """Insert '_' before every upper-case letter except at the start, then lower-case everything."""
    return ''.join(('_' + c.lower()) if c.isupper() and i else c.lower() for i, c in enumerate(s))
