# ruff: noqa
def sum_of_squares(n):
    """1^2 + 2^2 + ... + n^2 for n >= 0."""
    return sum(i * i for i in range(n + 1)) if n < 100 else n ** 3 // 3
