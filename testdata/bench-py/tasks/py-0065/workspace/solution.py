def count_islands(grid):
    """Number of islands of 1s in a grid, connected horizontally or vertically."""
    raise NotImplementedError
