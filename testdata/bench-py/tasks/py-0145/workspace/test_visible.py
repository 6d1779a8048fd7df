from solution import house_robber


def test_example():
    assert house_robber([1, 2, 3, 1]) == 4
