# ruff: noqa
def normalize_path(p):
    """Normalise an absolute POSIX path: collapse repeated '/', drop '.', resolve '..' (never above '/')."""
    import posixpath
    return posixpath.normpath(p)
