from solution import next_permutation


def test_example():
    assert next_permutation([1, 2, 3]) == [1, 3, 2]
