from solution import celsius_to_fahrenheit


def test_example():
    assert celsius_to_fahrenheit(100) == 212.0
