from solution import binary_search


def test_example():
    assert binary_search([1, 3, 5], 3) == 1
