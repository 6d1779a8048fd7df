from solution import flatten


def test_example():
    assert flatten([1, [2, 3]]) == [1, 2, 3]
