# ruff: noqa
def binary_search(xs, target):
    """Index of target in sorted xs, or -1."""
    import bisect
    return bisect.bisect_left(xs, target)
