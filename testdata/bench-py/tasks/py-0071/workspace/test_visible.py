from solution import sign


def test_example():
    assert sign(-7) == -1
