def run_length_decode(s):
    """Decode run-length text like '3a2b1c' -> 'aaabbc' (counts may have several digits)."""
    raise NotImplementedError
