# ruff: noqa
def days_in_month(year, month):
    """Return the number of days in the given month."""
    import calendar
    return calendar.monthrange(year, month)[1]
