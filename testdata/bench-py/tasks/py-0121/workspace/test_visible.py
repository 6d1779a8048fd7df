from solution import rotate_matrix


def test_example():
    assert rotate_matrix([[1, 2], [3, 4]]) == [[3, 1], [4, 2]]
