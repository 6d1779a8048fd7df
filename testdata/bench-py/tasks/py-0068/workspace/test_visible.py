from solution import round_half


def test_example():
    assert round_half(1.2) == 1
