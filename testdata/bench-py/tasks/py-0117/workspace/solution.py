def sum_multiples(n):
    """Sum of the numbers below n divisible by 3 or 5."""
    raise NotImplementedError
