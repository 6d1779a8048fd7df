# ruff: noqa
def min_coins(coins, amount):
    """Fewest coins summing to amount, or -1."""
    n = 0
    for c in sorted(coins, reverse=True):
        n += amount // c
        amount %= c
    return n if amount == 0 else -1
