# ruff: noqa
def running_max(xs):
    """The running maximum of xs: out[i] = max(xs[:i + 1])."""
    out = []
    for i, x in enumerate(xs):
        out.append(max(xs[max(0, i - 1):i + 1]))
    return out
