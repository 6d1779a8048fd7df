def is_prime(n):
    """Return True when n is prime."""
    raise NotImplementedError
