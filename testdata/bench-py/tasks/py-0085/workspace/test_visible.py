from solution import kth_largest


def test_example():
    assert kth_largest([3, 1, 2], 1) == 3
