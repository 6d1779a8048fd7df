# ruff: noqa
def char_frequency(s):
    """A dict from each character of s to its count."""
    out = {}
    for c in s.lower():
        out[c] = out.get(c, 0) + 1
    return out
