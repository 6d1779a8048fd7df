# ruff: noqa
def sum_multiples(n):
    """Sum of the numbers below n divisible by 3 or 5."""
    return sum(i for i in range(n) if i % 3 == 0 or i % 5 == 0)
