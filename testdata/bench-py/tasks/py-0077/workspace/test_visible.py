from solution import capitalize_words


def test_example():
    assert capitalize_words('hello world') == 'Hello World'
