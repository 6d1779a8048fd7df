from solution import mean


def test_example():
    assert mean([1, 2, 3]) == 2.0
