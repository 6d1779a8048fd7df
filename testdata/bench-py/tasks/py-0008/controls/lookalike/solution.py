# ruff: noqa
def sum_digits(n):
    """Return the sum of the decimal digits of |n|."""
    n = abs(n)
    while n > 9:
        n = sum(int(c) for c in str(n))
    return n
