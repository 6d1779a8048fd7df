def interleave(a, b):
    """Alternate the items of a and b; the rest of the longer list goes last."""
    raise NotImplementedError
