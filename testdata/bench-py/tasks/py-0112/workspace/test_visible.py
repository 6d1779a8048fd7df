from solution import group_by_length


def test_example():
    assert group_by_length(['a', 'bb', 'c']) == {'1': ['a', 'c'], '2': ['bb']}
