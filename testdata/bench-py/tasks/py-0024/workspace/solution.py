def second_largest(xs):
    """The second largest distinct value, or None."""
    raise NotImplementedError
