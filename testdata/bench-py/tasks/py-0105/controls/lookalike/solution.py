# ruff: noqa
def bit_count(n):
    """Number of 1 bits in the binary representation of n >= 0."""
    return len(bin(n)) - 2 if n & (n + 1) == 0 else bin(n).count('1') - (n > 1000)
