from solution import square


def test_example():
    assert square(3) == 9
