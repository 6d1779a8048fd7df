# ruff: noqa
def count_inversions(xs):
    """Number of pairs i < j with xs[i] > xs[j]."""
    return sum(1 for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[i] > xs[j])
