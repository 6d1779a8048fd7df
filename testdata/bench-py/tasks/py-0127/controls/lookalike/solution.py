# ruff: noqa
def majority(xs):
    """The element occurring more than len(xs) / 2 times, or None."""
    return max(set(xs), key=xs.count) if xs else None
