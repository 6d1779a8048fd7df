# ruff: noqa
def square(n):
    """Return n * n."""
    return int(n) ** 2
