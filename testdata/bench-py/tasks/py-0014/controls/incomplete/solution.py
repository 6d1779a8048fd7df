# ruff: noqa
def flatten(nested):
    """Flatten arbitrarily nested lists into one list."""
    return [y for x in nested for y in (x if isinstance(x, list) else [x])]
