# ruff: noqa
def absolute(n):
    """Return the absolute value of n."""
    return n if n > 0 else -int(n)
