from solution import queue_time


def test_example():
    assert queue_time([5, 3, 4], 1) == 12
