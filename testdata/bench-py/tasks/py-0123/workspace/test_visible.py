from solution import move_zeros


def test_example():
    assert move_zeros([0, 1, 0, 3]) == [1, 3, 0, 0]
