# ruff: noqa
def array_diff(a, b):
    """The items of a that are not in b, in a's order (duplicates kept)."""
    return sorted(set(a) - set(b))
