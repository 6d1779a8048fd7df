# ruff: noqa
def intersect_sorted(a, b):
    """Common items of two sorted lists, with multiplicity, in sorted order."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i += 1
            j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return out
