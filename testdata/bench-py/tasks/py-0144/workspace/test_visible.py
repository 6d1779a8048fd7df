from solution import longest_palindrome_sub


def test_example():
    assert longest_palindrome_sub('babad') == 3
