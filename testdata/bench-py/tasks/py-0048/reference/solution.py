# ruff: noqa
def digital_root(n):
    """Repeatedly sum the decimal digits of n >= 0 until one digit remains."""
    while n > 9:
        n = sum(int(c) for c in str(n))
    return n
