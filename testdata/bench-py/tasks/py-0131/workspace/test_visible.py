from solution import num_to_words


def test_example():
    assert num_to_words(42) == 'forty-two'
