def remove_duplicates_sorted(xs):
    """Sorted list of the distinct values of xs."""
    raise NotImplementedError
