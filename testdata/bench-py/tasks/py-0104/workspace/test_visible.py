from solution import safe_divide


def test_example():
    assert safe_divide(6, 3) == 2.0
