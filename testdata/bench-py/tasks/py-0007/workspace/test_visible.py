from solution import factorial


def test_example():
    assert factorial(4) == 24
