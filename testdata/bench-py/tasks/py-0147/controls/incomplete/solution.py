# ruff: noqa
def count_inversions(xs):
    """Number of pairs i < j with xs[i] > xs[j]."""
    return sum(1 for i in range(len(xs) - 1) if xs[i] > xs[i + 1])
