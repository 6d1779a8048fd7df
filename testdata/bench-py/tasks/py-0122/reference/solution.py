# ruff: noqa
def excel_number(s):
    """Inverse of the spreadsheet column name: 'A' -> 1, 'AA' -> 27."""
    n = 0
    for c in s:
        n = n * 26 + ord(c) - 64
    return n
