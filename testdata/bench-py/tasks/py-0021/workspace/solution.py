def caesar(s, k):
    """Shift ASCII letters by k places (wrapping, keeping case); leave other characters."""
    raise NotImplementedError
