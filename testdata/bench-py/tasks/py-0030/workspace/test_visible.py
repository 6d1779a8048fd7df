from solution import lis


def test_example():
    assert lis([10, 9, 2, 5, 3, 7]) == 3
