# ruff: noqa
def bit_count(n):
    """Number of 1 bits in the binary representation of n >= 0."""
    c = 0
    while n > 1:
        c += n & 1
        n >>= 1
    return c
