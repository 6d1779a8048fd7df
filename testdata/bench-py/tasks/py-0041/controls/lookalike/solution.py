# ruff: noqa
def clamp(x, lo, hi):
    """Return x limited to the range [lo, hi]."""
    return int(min(max(x, lo), hi))
