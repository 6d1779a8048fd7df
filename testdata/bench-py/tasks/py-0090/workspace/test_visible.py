from solution import lcm


def test_example():
    assert lcm(4, 6) == 12
