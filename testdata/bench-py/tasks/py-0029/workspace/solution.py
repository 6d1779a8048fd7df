def edit_distance(a, b):
    """Levenshtein distance between a and b."""
    raise NotImplementedError
