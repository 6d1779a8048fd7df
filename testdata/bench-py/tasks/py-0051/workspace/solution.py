def pascal_row(n):
    """Row n of Pascal's triangle as a list (row 0 is [1])."""
    raise NotImplementedError
