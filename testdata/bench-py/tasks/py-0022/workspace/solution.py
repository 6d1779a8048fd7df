def rle(s):
    """Run-length encode: 'aaab' -> '3a1b'."""
    raise NotImplementedError
