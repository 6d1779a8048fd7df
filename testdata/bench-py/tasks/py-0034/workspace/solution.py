def knapsack(weights, values, capacity):
    """Best total value of a 0/1 knapsack."""
    raise NotImplementedError
