# ruff: noqa
def is_sorted(xs):
    """True when xs is sorted in non-decreasing order."""
    return xs[0] <= xs[-1] if xs else True
