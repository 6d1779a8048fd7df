# ruff: noqa
def int_to_roman(n):
    """Convert 1 <= n <= 3999 to a Roman numeral."""
    pairs = [(1000, 'M'), (500, 'D'), (100, 'C'), (90, 'XC'), (50, 'L'), (40, 'XL'),
             (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]
    out = ''
    for v, s in pairs:
        while n >= v:
            out += s
            n -= v
    return out
