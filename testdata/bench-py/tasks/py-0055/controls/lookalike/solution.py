# ruff: noqa
def prime_factors(n):
    """Prime factors of n >= 1 in ascending order, with multiplicity."""
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    return out
