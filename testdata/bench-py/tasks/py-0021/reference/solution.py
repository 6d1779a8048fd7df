# ruff: noqa
def caesar(s, k):
    """Shift ASCII letters by k places (wrapping, keeping case); leave other characters."""
    out = []
    for c in s:
        if c.isalpha() and c.isascii():
            base = ord('A') if c.isupper() else ord('a')
            out.append(chr((ord(c) - base + k) % 26 + base))
        else:
            out.append(c)
    return ''.join(out)
