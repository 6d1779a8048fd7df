def matrix_trace(m):
    """Sum of the main diagonal of a square matrix (0 for [])."""
    raise NotImplementedError
