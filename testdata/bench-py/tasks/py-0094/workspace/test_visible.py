from solution import digits_of


def test_example():
    assert digits_of(123) == [1, 2, 3]
