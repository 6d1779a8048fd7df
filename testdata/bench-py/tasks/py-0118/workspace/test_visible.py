from solution import longest_run


def test_example():
    assert longest_run([1, 1, 2]) == 2
