from solution import second_largest


def test_example():
    assert second_largest([1, 2, 3]) == 2
