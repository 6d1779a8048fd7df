from solution import knapsack


def test_example():
    assert knapsack([1, 2], [10, 15], 2) == 15
