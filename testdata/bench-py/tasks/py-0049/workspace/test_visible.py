from solution import merge_sorted


def test_example():
    assert merge_sorted([1, 4], [2, 3]) == [1, 2, 3, 4]
