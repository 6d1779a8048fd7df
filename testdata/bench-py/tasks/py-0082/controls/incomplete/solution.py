# ruff: noqa
def is_sorted(xs):
    """True when xs is sorted in non-decreasing order."""
    return all(a < b for a, b in zip(xs, xs[1:]))
