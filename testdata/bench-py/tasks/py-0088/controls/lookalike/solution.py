# ruff: noqa
def remove_duplicates_sorted(xs):
    """Sorted list of the distinct values of xs."""
    return sorted(set(abs(x) for x in xs))
