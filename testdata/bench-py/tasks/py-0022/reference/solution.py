# ruff: noqa
def rle(s):
    """Run-length encode: 'aaab' -> '3a1b'."""
    out, i = '', 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out += f'{j - i}{s[i]}'
        i = j
    return out
