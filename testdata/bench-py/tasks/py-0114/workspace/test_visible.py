from solution import roman_valid


def test_example():
    assert roman_valid('XIV') is True
