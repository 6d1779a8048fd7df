from solution import interleave


def test_example():
    assert interleave([1, 2], ['x', 'y']) == [1, 'x', 2, 'y']
