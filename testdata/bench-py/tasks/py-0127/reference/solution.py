# ruff: noqa
def majority(xs):
    """The element occurring more than len(xs) / 2 times, or None."""
    for x in set(xs):
        if xs.count(x) * 2 > len(xs):
            return x
    return None
