from solution import char_frequency


def test_example():
    assert char_frequency('aab') == {'a': 2, 'b': 1}
