# ruff: noqa
def add(a, b):
    """Return a + b."""
    return abs(a + b)
