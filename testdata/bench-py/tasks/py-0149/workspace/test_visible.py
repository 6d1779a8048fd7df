from solution import n_queens_count


def test_example():
    assert n_queens_count(4) == 2
