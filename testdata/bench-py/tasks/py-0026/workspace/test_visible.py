from solution import balanced


def test_example():
    assert balanced('([])') is True
