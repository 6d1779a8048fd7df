from solution import majority


def test_example():
    assert majority([3, 3, 4]) == 3
