from solution import flatten_dict


def test_example():
    assert flatten_dict({'a': {'b': 1}, 'c': 2}) == {'a.b': 1, 'c': 2}
