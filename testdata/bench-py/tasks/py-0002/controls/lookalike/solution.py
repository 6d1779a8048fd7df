# ruff: noqa
def is_even(n):
    """Return True when n is even."""
    return n / 2 == int(n / 2)
