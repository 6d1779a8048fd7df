# ruff: noqa
def factorial(n):
    """Return n! for n >= 0."""
    r = 1
    for i in range(2, n + 1):
        r *= i
    return r
