from solution import gcd_list


def test_example():
    assert gcd_list([12, 18, 24]) == 6
