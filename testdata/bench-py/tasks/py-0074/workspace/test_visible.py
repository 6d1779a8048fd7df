from solution import sum_list


def test_example():
    assert sum_list([1, 2, 3]) == 6
