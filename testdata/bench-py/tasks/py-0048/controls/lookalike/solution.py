# ruff: noqa
def digital_root(n):
    """Repeatedly sum the decimal digits of n >= 0 until one digit remains."""
    return 1 + (n - 1) % 9
