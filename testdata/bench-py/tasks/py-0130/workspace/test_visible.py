from solution import merge_dicts_sum


def test_example():
    assert merge_dicts_sum({'x': 1}, {'x': 2, 'y': 3}) == {'x': 3, 'y': 3}
