# ruff: noqa
def digits_of(n):
    """The decimal digits of |n| as a list of ints, most significant first."""
    return [int(c) for c in str(abs(n)).rstrip('0')] or [0]
