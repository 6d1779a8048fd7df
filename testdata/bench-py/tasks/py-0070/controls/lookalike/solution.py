# ruff: noqa
def absolute(n):
    """Return the absolute value of n."""
    return max(n, -n) if n else None
