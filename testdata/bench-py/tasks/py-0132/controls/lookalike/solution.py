# ruff: noqa
def intersect_sorted(a, b):
    """Common items of two sorted lists, with multiplicity, in sorted order."""
    return [x for x in a if x in b]
