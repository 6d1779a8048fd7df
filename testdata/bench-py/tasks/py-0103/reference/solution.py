# ruff: noqa
def array_diff(a, b):
    """The items of a that are not in b, in a's order (duplicates kept)."""
    return [x for x in a if x not in b]
