from solution import to_base


def test_example():
    assert to_base(5, 2) == '101'
