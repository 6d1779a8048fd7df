def merge_dicts_sum(a, b):
    """Merge two dicts of numbers, adding the values of shared keys."""
    raise NotImplementedError
