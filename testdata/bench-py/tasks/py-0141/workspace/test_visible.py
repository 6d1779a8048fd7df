from solution import interval_cover


def test_example():
    assert interval_cover([[1, 3], [2, 5]]) == 4
