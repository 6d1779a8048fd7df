from solution import happy_number


def test_example():
    assert happy_number(19) is True
