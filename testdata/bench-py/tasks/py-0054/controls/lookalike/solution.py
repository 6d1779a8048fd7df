# ruff: noqa
def camel_to_snake(s):
    """Insert '_' before every upper-case letter except at the start, then lower-case everything."""
    import re
    return re.sub('([a-z])([A-Z])', r'\1_\2', s).lower()
