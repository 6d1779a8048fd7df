from solution import parse_duration


def test_example():
    assert parse_duration('1h') == 3600
