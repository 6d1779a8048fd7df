from solution import count_words


def test_example():
    assert count_words('a b c') == 3
