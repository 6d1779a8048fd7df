from solution import spiral


def test_example():
    assert spiral([[1, 2], [3, 4]]) == [1, 2, 4, 3]
