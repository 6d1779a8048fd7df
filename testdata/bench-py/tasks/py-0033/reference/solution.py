# ruff: noqa
def spiral(m):
    """Elements of a matrix in clockwise spiral order."""
    out = []
    m = [list(r) for r in m]
    while m:
        out += m.pop(0)
        m = [list(r) for r in zip(*m)][::-1]
    return out
