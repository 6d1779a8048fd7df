from solution import dedupe


def test_example():
    assert dedupe([1, 1, 2]) == [1, 2]
