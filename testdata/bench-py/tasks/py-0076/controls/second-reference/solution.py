# ruff: noqa
def days_in_month(year, month):
    """Return the number of days in the given month."""
    if month == 2:
        return 29 if year % 4 == 0 else 28
    return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
