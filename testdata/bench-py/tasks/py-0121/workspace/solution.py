def rotate_matrix(m):
    """Rotate a square matrix 90 degrees clockwise."""
    raise NotImplementedError
