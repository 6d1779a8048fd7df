# ruff: noqa
def happy_number(n):
    """True when repeatedly summing the squares of the digits of n >= 1 reaches 1."""
    seen = set()
    while n != 1 and n not in seen:
        seen.add(n)
        n = sum(int(c) ** 2 for c in str(n))
    return n == 1
