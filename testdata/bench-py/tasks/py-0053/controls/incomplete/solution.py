# ruff: noqa
def ordinal(n):
    """English ordinal of n >= 0: 1 -> '1st', 2 -> '2nd', 11 -> '11th', 23 -> '23rd'."""
    return str(n) + {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')
