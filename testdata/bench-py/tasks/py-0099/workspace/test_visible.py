from solution import pairs_sum


def test_example():
    assert pairs_sum([1, 2, 3, 4], 5) == 2
