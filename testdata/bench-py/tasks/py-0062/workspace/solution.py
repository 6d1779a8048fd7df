def normalize_path(p):
    """Normalise an absolute POSIX path: collapse repeated '/', drop '.', resolve '..' (never above '/')."""
    raise NotImplementedError
