# ruff: noqa
def add(a, b):
    """Return a + b."""
    return a + b
