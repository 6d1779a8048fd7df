def matrix_multiply(a, b):
    """Matrix product of a (n x k) and b (k x m), as lists of rows."""
    raise NotImplementedError
