# ruff: noqa
def interleave(a, b):
    """Alternate the items of a and b; the rest of the longer list goes last."""
    out = []
    for x, y in zip(a, b):
        out += [x, y]
    return out + b[len(a):]
