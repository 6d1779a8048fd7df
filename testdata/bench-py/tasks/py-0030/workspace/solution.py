def lis(xs):
    """Length of the longest strictly increasing subsequence."""
    raise NotImplementedError
