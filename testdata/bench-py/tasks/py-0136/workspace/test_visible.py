from solution import sliding_max


def test_example():
    assert sliding_max([1, 3, -1, -3, 5], 3) == [3, 3, 5]
