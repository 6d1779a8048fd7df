from solution import remove_duplicates_sorted


def test_example():
    assert remove_duplicates_sorted([3, 1, 3]) == [1, 3]
