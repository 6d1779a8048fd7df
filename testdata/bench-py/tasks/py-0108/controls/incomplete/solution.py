# ruff: noqa
def cumulative_sum(xs):
    """Running totals of xs."""
    out, t = [], 0
    for x in xs[:-1]:
        t += x
        out.append(t)
    return out + ([t + xs[-1]] if xs else [0])
