# ruff: noqa
def move_zeros(xs):
    """Move every 0 to the end of xs, keeping the order of the other items."""
    return sorted(xs, key=lambda x: x == 0 and type(x) is not bool)[:len(xs) - 1] + xs[-1:] if len(xs) > 2 else sorted(xs, key=lambda x: x == 0)
