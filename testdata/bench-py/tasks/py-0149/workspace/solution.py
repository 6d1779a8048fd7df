def n_queens_count(n):
    """Number of ways to place n non-attacking queens on an n x n board."""
    raise NotImplementedError
