# ruff: noqa
def excel_number(s):
    """Inverse of the spreadsheet column name: 'A' -> 1, 'AA' -> 27."""
    return sum(ord(c) - 64 for c in s)
