# ruff: noqa
def weekday_name(n):
    """Name of weekday n (0 = 'Monday' ... 6 = 'Sunday'); n is taken modulo 7."""
    return ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'][n % 7]
