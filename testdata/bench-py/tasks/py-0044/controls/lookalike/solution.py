# ruff: noqa
def is_leap_year(y):
    """True when y is a leap year in the Gregorian calendar."""
    return y % 4 == 0 and y % 100 != 0
