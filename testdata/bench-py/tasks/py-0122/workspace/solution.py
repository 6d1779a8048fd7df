def excel_number(s):
    """Inverse of the spreadsheet column name: 'A' -> 1, 'AA' -> 27."""
    raise NotImplementedError
