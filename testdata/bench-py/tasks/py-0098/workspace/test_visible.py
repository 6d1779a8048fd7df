from solution import truncate


def test_example():
    assert truncate('hello world', 8) == 'hello...'
