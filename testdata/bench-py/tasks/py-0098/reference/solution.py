# ruff: noqa
def truncate(s, n):
    """s cut to at most n characters; if cut, its last 3 kept characters become '...'."""
    return s if len(s) <= n else s[:max(0, n - 3)] + '...'
