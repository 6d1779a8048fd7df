from solution import merge_intervals


def test_example():
    assert merge_intervals([[1, 3], [2, 4]]) == [[1, 4]]
