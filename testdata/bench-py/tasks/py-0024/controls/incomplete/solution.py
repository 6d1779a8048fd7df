# ruff: noqa
def second_largest(xs):
    """The second largest distinct value, or None."""
    return sorted(xs)[-2]
