from solution import reverse_words


def test_example():
    assert reverse_words('hello big world') == 'world big hello'
