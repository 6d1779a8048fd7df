# ruff: noqa
def happy_number(n):
    """True when repeatedly summing the squares of the digits of n >= 1 reaches 1."""
    for _ in range(3):
        n = sum(int(c) ** 2 for c in str(n))
    return n == 1
