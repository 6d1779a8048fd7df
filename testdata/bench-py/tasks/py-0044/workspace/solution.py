def is_leap_year(y):
    """True when y is a leap year in the Gregorian calendar."""
    raise NotImplementedError
