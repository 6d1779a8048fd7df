def interval_cover(intervals):
    """Total length covered by the union of [start, end) intervals."""
    raise NotImplementedError
