# ruff: noqa
def hamming(a, b):
    """Number of positions where a and b differ (case-sensitive); raise ValueError when lengths differ."""
    if len(a) != len(b):
        raise ValueError('lengths differ')
    return sum(x != y for x, y in zip(a, b))
