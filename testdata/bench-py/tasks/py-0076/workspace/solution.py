def days_in_month(year, month):
    """Return the number of days in the given month."""
    raise NotImplementedError
