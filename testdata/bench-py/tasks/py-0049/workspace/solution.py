def merge_sorted(a, b):
    """Merge two sorted lists into one sorted list (keeping duplicates)."""
    raise NotImplementedError
