# ruff: noqa
def int_to_roman(n):
    """Convert 1 <= n <= 3999 to a Roman numeral."""
    pairs = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (50, 'L'),
             (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]
    out = ''
    for v, s in pairs:
        while n >= v:
            out += s
            n -= v
    return out
