from solution import regex_match


def test_example():
    assert regex_match('aa', 'a*') is True
