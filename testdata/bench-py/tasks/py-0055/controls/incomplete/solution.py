# ruff: noqa
def prime_factors(n):
    """Prime factors of n >= 1 in ascending order, with multiplicity."""
    out, d = [], 2
    while d * d <= n:
        if n % d == 0:
            out.append(d)
            while n % d == 0:
                n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out
