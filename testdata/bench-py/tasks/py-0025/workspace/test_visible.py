from solution import transpose


def test_example():
    assert transpose([[1, 2]]) == [[1], [2]]
