from solution import lru_misses


def test_example():
    assert lru_misses(2, [1, 2, 1]) == 2
