def kth_largest(xs, k):
    """The k-th largest element of xs (k = 1 is the maximum; duplicates count)."""
    raise NotImplementedError
