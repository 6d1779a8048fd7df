# ruff: noqa
def normalize_path(p):
    """Normalise an absolute POSIX path: collapse repeated '/', drop '.', resolve '..' (never above '/')."""
    parts = []
    for seg in p.split('/'):
        if seg == '..':
            if parts:
                parts.pop()
        elif seg and seg != '.':
            parts.append(seg)
    return '/' + '/'.join(parts)
