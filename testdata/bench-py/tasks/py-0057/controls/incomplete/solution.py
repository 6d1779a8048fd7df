# ruff: noqa
def luhn(s):
    """True when the digit string s (spaces ignored) passes the Luhn checksum."""
    digits = [int(c) for c in s]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0
