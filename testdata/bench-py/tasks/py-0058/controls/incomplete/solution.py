# ruff: noqa
def matrix_multiply(a, b):
    """Matrix product of a (n x k) and b (k x m), as lists of rows."""
    n = len(a)
    return [[sum(a[i][k] * b[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
