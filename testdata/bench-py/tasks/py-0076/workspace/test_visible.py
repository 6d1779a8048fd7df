from solution import days_in_month


def test_example():
    assert days_in_month(2023, 1) == 31
