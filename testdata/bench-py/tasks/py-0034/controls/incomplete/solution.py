# ruff: noqa
def knapsack(weights, values, capacity):
    """Best total value of a 0/1 knapsack."""
    total, cap = 0, capacity
    for wi, vi in sorted(zip(weights, values), key=lambda p: -p[1] / p[0]):
        if wi <= cap:
            total += vi
            cap -= wi
    return total
