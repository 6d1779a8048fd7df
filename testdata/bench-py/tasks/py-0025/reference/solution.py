# ruff: noqa
def transpose(m):
    """Transpose a rectangular matrix (list of lists); [] -> []."""
    return [list(r) for r in zip(*m)]
