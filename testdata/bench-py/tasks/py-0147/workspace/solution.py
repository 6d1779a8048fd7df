def count_inversions(xs):
    """Number of pairs i < j with xs[i] > xs[j]."""
    raise NotImplementedError
