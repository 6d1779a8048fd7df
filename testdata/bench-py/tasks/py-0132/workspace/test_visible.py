from solution import intersect_sorted


def test_example():
    assert intersect_sorted([1, 2, 2, 3], [2, 2, 4]) == [2, 2]
