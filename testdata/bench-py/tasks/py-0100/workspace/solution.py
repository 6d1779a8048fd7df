def weekday_name(n):
    """Name of weekday n (0 = 'Monday' ... 6 = 'Sunday'); n is taken modulo 7."""
    raise NotImplementedError
