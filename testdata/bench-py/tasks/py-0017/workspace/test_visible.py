from solution import int_to_roman


def test_example():
    assert int_to_roman(14) == 'XIV'
