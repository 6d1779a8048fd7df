# ruff: noqa
def to_base(n, b):
    """n written in base b (2..36) with digits 0-9a-z, '-' for negatives, '0' for 0."""
    digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
    if n == 0:
        return '0'
    sign, n, out = '-' if n < 0 else '', abs(n), ''
    while n:
        n, r = divmod(n, b)
        out = digits[r] + out
    return sign + out
