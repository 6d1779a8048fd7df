from solution import min_coins


def test_example():
    assert min_coins([1, 2, 5], 11) == 3
