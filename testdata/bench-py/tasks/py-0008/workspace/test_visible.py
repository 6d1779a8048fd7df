from solution import sum_digits


def test_example():
    assert sum_digits(123) == 6
