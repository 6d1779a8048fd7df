from solution import count_positive


def test_example():
    assert count_positive([1, -2, 3]) == 2
