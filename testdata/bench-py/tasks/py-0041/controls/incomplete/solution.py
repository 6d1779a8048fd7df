# ruff: noqa
def clamp(x, lo, hi):
    """Return x limited to the range [lo, hi]."""
    return max(x, lo)
