# ruff: noqa
def kth_largest(xs, k):
    """The k-th largest element of xs (k = 1 is the maximum; duplicates count)."""
    return sorted(xs)[k - 1] if k > 1 else max(xs)
