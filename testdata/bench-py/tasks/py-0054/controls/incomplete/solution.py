# ruff: noqa
def camel_to_snake(s):
    """Insert '_' before every upper-case letter except at the start, then lower-case everything."""
    return ''.join('_' + c.lower() if c.isupper() else c for c in s)
