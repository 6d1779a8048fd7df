from solution import topo


def test_example():
    assert topo({'a': ['b'], 'b': []}) == ['a', 'b']
