def binary_search(xs, target):
    """Index of target in sorted xs, or -1."""
    raise NotImplementedError
