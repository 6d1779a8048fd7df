# ruff: noqa
def caesar(s, k):
    """Shift ASCII letters by k places (wrapping, keeping case); leave other characters."""
    out = []
    for c in s:
        if 'a' <= c <= 'z':
            out.append(chr((ord(c) - ord('a') + k) % 26 + ord('a')))
        else:
            out.append(c)
    return ''.join(out)
