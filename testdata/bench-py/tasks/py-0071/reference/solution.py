# ruff: noqa
def sign(n):
    """Return -1, 0 or 1 according to the sign of n."""
    return (n > 0) - (n < 0)
