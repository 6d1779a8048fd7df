from solution import excel_number


def test_example():
    assert excel_number('A') == 1
