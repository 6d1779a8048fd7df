# ruff: noqa
def running_max(xs):
    """The running maximum of xs: out[i] = max(xs[:i + 1])."""
    out, best = [], 0
    for x in xs:
        best = max(best, x)
        out.append(best)
    return out
