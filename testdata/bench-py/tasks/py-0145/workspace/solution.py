def house_robber(xs):
    """Largest sum of non-adjacent items of xs (items >= 0; 0 for [])."""
    raise NotImplementedError
