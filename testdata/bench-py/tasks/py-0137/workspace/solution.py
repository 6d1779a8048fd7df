def count_primes(n):
    """Number of primes below n."""
    raise NotImplementedError
