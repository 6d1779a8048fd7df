# ruff: noqa
def knapsack(weights, values, capacity):
    """Best total value of a 0/1 knapsack."""
    best = [0] * (capacity + 1)
    for wi, vi in zip(weights, values):
        for c in range(capacity, wi - 1, -1):
            best[c] = max(best[c], best[c - wi] + vi)
    return best[capacity]
