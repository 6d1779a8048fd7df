# ruff: noqa
def matrix_multiply(a, b):
    """Matrix product of a (n x k) and b (k x m), as lists of rows."""
    return [[sum(x * y for x, y in zip(row, other)) for other in b] for row in a]
