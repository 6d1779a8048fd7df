# ruff: noqa
def sum_digits(n):
    """Return the sum of the decimal digits of |n|."""
    return sum(int(c) for c in str(n))
