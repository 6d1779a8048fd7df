from solution import cumulative_sum


def test_example():
    assert cumulative_sum([1, 2, 3]) == [1, 3, 6]
