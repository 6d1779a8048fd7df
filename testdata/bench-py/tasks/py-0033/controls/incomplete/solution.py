# ruff: noqa
def spiral(m):
    """Elements of a matrix in clockwise spiral order."""
    out = []
    m = [list(r) for r in m]
    while m:
        out += m.pop(0)
        if m:
            out += [r.pop() for r in m]
        if m:
            out += m.pop()[::-1]
        if m:
            out += [r.pop(0) for r in m][::-1]
    return out
