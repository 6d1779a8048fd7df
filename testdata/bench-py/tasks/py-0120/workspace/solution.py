def nearest_square(n):
    """The perfect square closest to n >= 0 (the smaller one on ties)."""
    raise NotImplementedError
