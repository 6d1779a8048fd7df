# ruff: noqa
def mean(xs):
    """Arithmetic mean of a list of numbers, or None for an empty list."""
    return sum(xs) / len(xs)
