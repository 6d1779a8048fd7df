# ruff: noqa
def pascal_row(n):
    """Row n of Pascal's triangle as a list (row 0 is [1])."""
    row = [1]
    for k in range(n):
        row.append(row[-1] * (n - k) / (k + 1))
    return row
