# ruff: noqa
def flatten(nested):
    """Flatten arbitrarily nested lists into one list."""
    out = []
    for v in nested:
        out.extend(flatten(v) if isinstance(v, list) else [v])
    return out
