# ruff: noqa
def is_prime(n):
    """Return True when n is prime."""
    if n < 2:
        return False
    for i in range(2, int(n ** 0.5)):
        if n % i == 0:
            return False
    return True
