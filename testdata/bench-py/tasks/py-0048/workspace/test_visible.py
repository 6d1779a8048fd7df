from solution import digital_root


def test_example():
    assert digital_root(123) == 6
