# ruff: noqa
def intersect_sorted(a, b):
    """Common items of two sorted lists, with multiplicity, in sorted order."""
    return sorted(set(a) & set(b))
