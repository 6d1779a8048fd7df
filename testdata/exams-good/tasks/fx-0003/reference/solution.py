# ruff: noqa
def round_half(x):
    """Round x to the nearest integer."""
    import math
    return int(math.copysign(math.floor(abs(x) + 0.5), x))
