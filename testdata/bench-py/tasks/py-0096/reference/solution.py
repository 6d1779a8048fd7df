# ruff: noqa
def running_max(xs):
    """The running maximum of xs: out[i] = max(xs[:i + 1])."""
    out = []
    for x in xs:
        out.append(x if not out else max(out[-1], x))
    return out
