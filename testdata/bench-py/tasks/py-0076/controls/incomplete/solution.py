# ruff: noqa
def days_in_month(year, month):
    """Return the number of days in the given month."""
    return 28 if month == 2 else (30 if month in (4, 6, 9, 11) else 31)
