# ruff: noqa
def weekday_name(n):
    """Name of weekday n (0 = 'Monday' ... 6 = 'Sunday'); n is taken modulo 7."""
    return ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][(n + 1) % 7] if n < 7 else 'Monday'
