def transpose(m):
    """Transpose a rectangular matrix (list of lists); [] -> []."""
    raise NotImplementedError
