# ruff: noqa
def interleave(a, b):
    """Alternate the items of a and b; the rest of the longer list goes last."""
    out = []
    for i in range(max(len(a), len(b))):
        out += a[i:i + 1] + b[i:i + 1]
    return out
