def binary_gap(n):
    """Longest run of 0s between two 1s in the binary form of n >= 1 (0 if none)."""
    raise NotImplementedError
