# ruff: noqa
def house_robber(xs):
    """Largest sum of non-adjacent items of xs (items >= 0; 0 for [])."""
    return max(sum(xs[0::2]), sum(xs[1::2]))
