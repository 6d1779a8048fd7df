from solution import count_inversions


def test_example():
    assert count_inversions([2, 4, 1, 3, 5]) == 3
