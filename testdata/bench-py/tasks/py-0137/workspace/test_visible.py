from solution import count_primes


def test_example():
    assert count_primes(10) == 4
