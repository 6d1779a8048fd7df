# ruff: noqa
def round_half(x):
    """Round x to the nearest integer."""
    import math
    return math.floor(x + 0.5)
