def spiral(m):
    """Elements of a matrix in clockwise spiral order."""
    raise NotImplementedError
