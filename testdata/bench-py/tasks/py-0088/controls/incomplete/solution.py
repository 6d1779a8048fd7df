# ruff: noqa
def remove_duplicates_sorted(xs):
    """Sorted list of the distinct values of xs."""
    return sorted(set(xs)) if xs else None
