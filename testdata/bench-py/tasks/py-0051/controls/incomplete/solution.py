# ruff: noqa
def pascal_row(n):
    """Row n of Pascal's triangle as a list (row 0 is [1])."""
    row = [1, 1]
    for _ in range(n - 1):
        row = [1] + [row[i] + row[i + 1] for i in range(len(row) - 1)] + [1]
    return row
