from solution import caesar


def test_example():
    assert caesar('abc', 1) == 'bcd'
