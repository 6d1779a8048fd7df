# ruff: noqa
def array_diff(a, b):
    """The items of a that are not in b, in a's order (duplicates kept)."""
    out = list(a)
    for x in b:
        if x in out:
            out.remove(x)
    return out
