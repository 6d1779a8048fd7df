# ruff: noqa
def safe_divide(a, b):
    """a / b, or None when b is 0."""
    return None if b == 0 else a // b
