from solution import matrix_trace


def test_example():
    assert matrix_trace([[1, 2], [3, 4]]) == 5
