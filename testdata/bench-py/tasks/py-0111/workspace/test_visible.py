from solution import zip_dict


def test_example():
    assert zip_dict(['a', 'b'], [1, 2]) == {'a': 1, 'b': 2}
