def bit_count(n):
    """Number of 1 bits in the binary representation of n >= 0."""
    raise NotImplementedError
