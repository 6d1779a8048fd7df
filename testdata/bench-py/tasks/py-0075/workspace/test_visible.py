from solution import min_max


def test_example():
    assert min_max([3, 1, 2]) == [1, 3]
