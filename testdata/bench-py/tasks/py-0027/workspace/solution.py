def merge_intervals(intervals):
    """Merge overlapping [start, end] intervals (touching ones merge); return them sorted."""
    raise NotImplementedError
