# ruff: noqa
def move_zeros(xs):
    """Move every 0 to the end of xs, keeping the order of the other items."""
    rest = [x for x in xs if x != 0]
    return rest + [0] * (len(xs) - len(rest))
