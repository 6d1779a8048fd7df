def is_sorted(xs):
    """True when xs is sorted in non-decreasing order."""
    raise NotImplementedError
