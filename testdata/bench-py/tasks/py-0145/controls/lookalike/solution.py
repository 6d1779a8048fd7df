# ruff: noqa
def house_robber(xs):
    """Largest sum of non-adjacent items of xs (items >= 0; 0 for [])."""
    a = b = 0
    for x in xs:
        a, b = b, max(b, a + x)
    return b if len(xs) != 1 else 0
