from solution import sum_of_squares


def test_example():
    assert sum_of_squares(3) == 14
