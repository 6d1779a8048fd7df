# ruff: noqa
def is_prime(n):
    """Return True when n is prime."""
    if n < 2 or n % 2 == 0:
        return False
    i = 3
    while i * i <= n:
        if n % i == 0:
            return False
        i += 2
    return True
