# ruff: noqa
def run_length_decode(s):
    """Decode run-length text like '3a2b1c' -> 'aaabbc' (counts may have several digits)."""
    return ''.join(s[i + 1] * int(s[i]) for i in range(0, len(s) - 1, 2))
