# ruff: noqa
def second_largest(xs):
    """The second largest distinct value, or None."""
    u = sorted(set(xs))
    return u[-2] if len(u) >= 2 else None
