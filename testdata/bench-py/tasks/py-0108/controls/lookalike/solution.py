# ruff: noqa
def cumulative_sum(xs):
    """Running totals of xs."""
    out, t = [], 0
    for x in xs:
        t += int(x)
        out.append(t)
    return out
