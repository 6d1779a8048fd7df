def unique_paths(grid):
    """Number of right/down paths from top-left to bottom-right of a 0/1 grid, never entering a 1."""
    raise NotImplementedError
