# ruff: noqa
def pairs_sum(xs, target):
    """Number of index pairs i < j with xs[i] + xs[j] == target."""
    return len({(min(a, b), max(a, b)) for i, a in enumerate(xs) for b in xs[i + 1:] if a + b == target})
