from solution import parse_bool


def test_example():
    assert parse_bool('yes') is True
