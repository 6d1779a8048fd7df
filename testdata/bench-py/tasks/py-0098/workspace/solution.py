def truncate(s, n):
    """s cut to at most n characters; if cut, its last 3 kept characters become '...'."""
    raise NotImplementedError
