from solution import array_diff


def test_example():
    assert array_diff([1, 2, 2, 3], [2]) == [1, 3]
