from solution import median


def test_example():
    assert median([1, 2, 3]) == 2
