# ruff: noqa
def pairs_sum(xs, target):
    """Number of index pairs i < j with xs[i] + xs[j] == target."""
    return sum(1 for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[i] + xs[j] == target and xs[i] >= 0 and xs[j] >= 0)
