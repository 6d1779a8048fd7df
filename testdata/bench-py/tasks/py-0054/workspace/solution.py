def camel_to_snake(s):
    """Insert '_' before every upper-case letter except at the start, then lower-case everything."""
    raise NotImplementedError
