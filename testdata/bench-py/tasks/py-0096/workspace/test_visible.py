from solution import running_max


def test_example():
    assert running_max([1, 3, 2]) == [1, 3, 3]
