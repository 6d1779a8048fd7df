# ruff: noqa
def rotate_matrix(m):
    """Rotate a square matrix 90 degrees clockwise."""
    return [list(r) for r in zip(*m[::-1])]
