from solution import nearest_square


def test_example():
    assert nearest_square(10) == 9
