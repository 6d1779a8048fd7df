from solution import gcd


def test_example():
    assert gcd(12, 18) == 6
