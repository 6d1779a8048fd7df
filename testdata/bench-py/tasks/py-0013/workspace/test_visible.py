from solution import is_prime


def test_example():
    assert is_prime(7) is True
