from solution import is_palindrome


def test_example():
    assert is_palindrome('abba') is True
