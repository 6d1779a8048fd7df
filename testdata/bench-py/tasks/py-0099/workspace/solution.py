def pairs_sum(xs, target):
    """Number of index pairs i < j with xs[i] + xs[j] == target."""
    raise NotImplementedError
