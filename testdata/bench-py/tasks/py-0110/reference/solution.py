# ruff: noqa
def matrix_trace(m):
    """Sum of the main diagonal of a square matrix (0 for [])."""
    return sum(m[i][i] for i in range(len(m)))
