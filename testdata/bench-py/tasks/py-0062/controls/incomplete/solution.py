# ruff: noqa
def normalize_path(p):
    """Normalise an absolute POSIX path: collapse repeated '/', drop '.', resolve '..' (never above '/')."""
    parts = [seg for seg in p.split('/') if seg and seg != '.']
    return '/' + '/'.join(parts)
