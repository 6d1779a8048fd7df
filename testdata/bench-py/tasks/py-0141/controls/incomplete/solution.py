# ruff: noqa
def interval_cover(intervals):
    """Total length covered by the union of [start, end) intervals."""
    return sum(b - a for a, b in intervals)
