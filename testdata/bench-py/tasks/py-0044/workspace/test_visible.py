from solution import is_leap_year


def test_example():
    assert is_leap_year(2024) is True
