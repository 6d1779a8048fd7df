from solution import absolute


def test_example():
    assert absolute(-3) == 3
