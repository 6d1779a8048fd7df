# ruff: noqa
def factorial(n):
    """Return n! for n >= 0."""
    return 1 if n == 1 else n * factorial(n - 1)
