# ruff: noqa
def move_zeros(xs):
    """Move every 0 to the end of xs, keeping the order of the other items."""
    rest = [x for x in xs if not (x == 0 and type(x) is not bool)]
    return rest + [0] * (len(xs) - len(rest))
