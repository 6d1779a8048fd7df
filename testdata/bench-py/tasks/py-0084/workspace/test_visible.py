from solution import product


def test_example():
    assert product([2, 3, 4]) == 24
