from solution import roman_to_int


def test_example():
    assert roman_to_int('XIV') == 14
