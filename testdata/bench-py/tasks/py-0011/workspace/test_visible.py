from solution import fibonacci


def test_example():
    assert fibonacci(10) == 55
