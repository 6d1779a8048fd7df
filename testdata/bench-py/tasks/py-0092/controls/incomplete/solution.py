# ruff: noqa
def sum_of_squares(n):
    """1^2 + 2^2 + ... + n^2 for n >= 0."""
    return sum(i * i for i in range(1, n))
