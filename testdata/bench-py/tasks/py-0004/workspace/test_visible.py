from solution import max_of_list


def test_example():
    assert max_of_list([1, 3, 2]) == 3
