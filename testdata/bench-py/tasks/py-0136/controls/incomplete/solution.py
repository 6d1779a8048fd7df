# ruff: noqa
def sliding_max(xs, k):
    """Maximum of each window of k consecutive items of xs."""
    return [max(xs[i:i + k]) for i in range(len(xs) - k)]
