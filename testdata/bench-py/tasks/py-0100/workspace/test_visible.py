from solution import weekday_name


def test_example():
    assert weekday_name(0) == 'Monday'
