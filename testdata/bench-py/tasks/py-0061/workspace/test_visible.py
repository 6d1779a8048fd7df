from solution import compress_ranges


def test_example():
    assert compress_ranges([1, 2, 3, 5]) == '1-3,5'
