# ruff: noqa
def sign(n):
    """Return -1, 0 or 1 according to the sign of n."""
    return -1 if n <= -1 else (1 if n >= 1 else 0)
