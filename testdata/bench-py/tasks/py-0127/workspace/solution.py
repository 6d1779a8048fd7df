def majority(xs):
    """The element occurring more than len(xs) / 2 times, or None."""
    raise NotImplementedError
