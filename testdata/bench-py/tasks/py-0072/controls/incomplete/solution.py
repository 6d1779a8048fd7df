# ruff: noqa
def last_item(xs):
    """Return the last element of xs, or None for an empty list."""
    return xs[-1]
