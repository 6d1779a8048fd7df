from solution import rotate_list


def test_example():
    assert rotate_list([1, 2, 3, 4], 1) == [4, 1, 2, 3]
