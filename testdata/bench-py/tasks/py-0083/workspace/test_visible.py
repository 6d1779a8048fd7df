from solution import initials


def test_example():
    assert initials('ada lovelace') == 'A.L.'
