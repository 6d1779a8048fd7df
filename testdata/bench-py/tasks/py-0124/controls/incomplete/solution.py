# ruff: noqa
def binary_gap(n):
    """Longest run of 0s between two 1s in the binary form of n >= 1 (0 if none)."""
    b = bin(n)[2:]
    return max((len(g) for g in b.split('1')), default=0)
