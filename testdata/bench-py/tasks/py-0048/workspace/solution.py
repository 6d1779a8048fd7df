def digital_root(n):
    """Repeatedly sum the decimal digits of n >= 0 until one digit remains."""
    raise NotImplementedError
