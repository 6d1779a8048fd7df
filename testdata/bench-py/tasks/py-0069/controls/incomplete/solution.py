# ruff: noqa
def square(n):
    """Return n * n."""
    return abs(n) * n
