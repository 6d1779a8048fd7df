# ruff: noqa
def lcm(a, b):
    """Least common multiple of the positive integers a and b."""
    return max(a, b) if max(a, b) % min(a, b) == 0 else a * b // 2
