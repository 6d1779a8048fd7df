def ordinal(n):
    """English ordinal of n >= 0: 1 -> '1st', 2 -> '2nd', 11 -> '11th', 23 -> '23rd'."""
    raise NotImplementedError
