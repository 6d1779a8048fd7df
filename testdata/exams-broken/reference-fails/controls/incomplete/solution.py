# ruff: noqa
def add(a, b):
    """Return a + b."""
    return int(a) + int(b)
