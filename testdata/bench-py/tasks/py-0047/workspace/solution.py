def hamming(a, b):
    """Number of positions where a and b differ (case-sensitive); raise ValueError when lengths differ."""
    raise NotImplementedError
