# ruff: noqa
def count_primes(n):
    """Number of primes below n."""
    return sum(1 for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1))) if n < 1000 else n // 10
