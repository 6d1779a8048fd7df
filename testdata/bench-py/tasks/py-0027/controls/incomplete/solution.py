# ruff: noqa
def merge_intervals(intervals):
    """Merge overlapping [start, end] intervals (touching ones merge); return them sorted."""
    out = []
    for a, b in intervals:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
