def sliding_max(xs, k):
    """Maximum of each window of k consecutive items of xs."""
    raise NotImplementedError
