# ruff: noqa
def square(n):
    """Return n * n."""
    return n * n
