from solution import average_word_length


def test_example():
    assert average_word_length('ab abcd') == 3.0
