from solution import is_sorted


def test_example():
    assert is_sorted([1, 2, 2, 3]) is True
