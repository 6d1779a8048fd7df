# ruff: noqa
def rotate_list(xs, k):
    """Rotate xs right by k places (k may be negative or larger than len(xs))."""
    return xs[-k:] + xs[:-k]
