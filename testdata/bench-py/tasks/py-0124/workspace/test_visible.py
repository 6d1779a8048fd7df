from solution import binary_gap


def test_example():
    assert binary_gap(9) == 2
