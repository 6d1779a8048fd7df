# ruff: noqa
def transpose(m):
    """Transpose a rectangular matrix (list of lists); [] -> []."""
    return [[row[i] for row in m] for i in range(len(m[0]))]
