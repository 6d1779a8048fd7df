from solution import count_islands


def test_example():
    assert count_islands([[1, 1, 0], [0, 0, 1]]) == 2
