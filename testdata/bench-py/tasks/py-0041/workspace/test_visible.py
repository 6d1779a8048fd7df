from solution import clamp


def test_example():
    assert clamp(5, 0, 10) == 5
