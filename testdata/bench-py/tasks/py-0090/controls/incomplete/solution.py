# ruff: noqa
def lcm(a, b):
    """Least common multiple of the positive integers a and b."""
    return a * b
