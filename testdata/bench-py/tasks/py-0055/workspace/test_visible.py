from solution import prime_factors


def test_example():
    assert prime_factors(12) == [2, 2, 3]
