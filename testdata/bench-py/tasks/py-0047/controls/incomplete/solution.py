# ruff: noqa
def hamming(a, b):
    """Number of positions where a and b differ (case-sensitive); raise ValueError when lengths differ."""
    return sum(x != y for x, y in zip(a, b))
