# ruff: noqa
def run_length_decode(s):
    """Decode run-length text like '3a2b1c' -> 'aaabbc' (counts may have several digits)."""
    import re
    return ''.join(ch * int(n) for n, ch in re.findall(r'(\d+)(\D)', s)) or None
