# ruff: noqa
def merge_dicts_sum(a, b):
    """Merge two dicts of numbers, adding the values of shared keys."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out
