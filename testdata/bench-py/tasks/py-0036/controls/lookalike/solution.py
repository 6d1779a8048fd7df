# ruff: noqa
def min_coins(coins, amount):
    """Fewest coins summing to amount, or -1."""
    inf = float('inf')
    best = [0] + [inf] * amount
    for a in range(1, amount + 1):
        best[a] = min((best[a - c] + 1 for c in coins if c <= a), default=inf)
    return best[amount]
