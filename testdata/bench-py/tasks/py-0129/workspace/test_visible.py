from solution import valid_email


def test_example():
    assert valid_email('a@b.co') is True
