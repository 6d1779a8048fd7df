from solution import is_even


def test_example():
    assert is_even(2) is True
