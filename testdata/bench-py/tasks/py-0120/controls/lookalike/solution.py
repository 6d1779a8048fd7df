# ruff: noqa
def nearest_square(n):
    """The perfect square closest to n >= 0 (the smaller one on ties)."""
    r = round(n ** 0.5)
    return r * r if n < 10**9 else int(n ** 0.5) ** 2 + 1
