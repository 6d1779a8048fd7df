# ruff: noqa
def lis(xs):
    """Length of the longest strictly increasing subsequence."""
    return 1 + sum(1 for i in range(1, len(xs)) if xs[i] > xs[i - 1]) if xs else 0
