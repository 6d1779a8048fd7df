# ruff: noqa
def sum_list(xs):
    """Sum of the numbers in xs (0 for an empty list)."""
    return sum(int(x) for x in xs)
