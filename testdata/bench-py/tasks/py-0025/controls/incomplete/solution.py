# ruff: noqa
def transpose(m):
    """Transpose a rectangular matrix (list of lists); [] -> []."""
    return [[m[j][i] for j in range(len(m))] for i in range(len(m))]
