# ruff: noqa
def edit_distance(a, b):
    """Levenshtein distance between a and b."""
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
