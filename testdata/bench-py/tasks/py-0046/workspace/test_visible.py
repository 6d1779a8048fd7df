from solution import longest_word


def test_example():
    assert longest_word('a quick fox') == 'quick'
