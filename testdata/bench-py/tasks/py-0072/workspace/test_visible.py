from solution import last_item


def test_example():
    assert last_item([1, 2, 3]) == 3
