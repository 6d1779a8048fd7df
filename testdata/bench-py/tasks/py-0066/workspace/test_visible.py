from solution import parse_csv_line


def test_example():
    assert parse_csv_line('a,b,c') == ['a', 'b', 'c']
