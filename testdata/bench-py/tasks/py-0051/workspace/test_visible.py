from solution import pascal_row


def test_example():
    assert pascal_row(4) == [1, 4, 6, 4, 1]
