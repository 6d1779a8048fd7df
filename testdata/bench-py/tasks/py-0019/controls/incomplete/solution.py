# ruff: noqa
def chunk(xs, n):
    """Split xs into lists of n items (the last may be shorter)."""
    return [xs[i * n:(i + 1) * n] for i in range(len(xs) // n)]
