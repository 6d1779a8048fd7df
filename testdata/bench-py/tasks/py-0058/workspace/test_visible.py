from solution import matrix_multiply


def test_example():
    assert matrix_multiply([[1, 2], [3, 4]], [[2, 0], [0, 2]]) == [[2, 4], [6, 8]]
