# ruff: noqa
def sum_of_squares(n):
    """1^2 + 2^2 + ... + n^2 for n >= 0."""
    return n * (n + 1) * (2 * n + 1) // 6
