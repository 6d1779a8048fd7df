def min_coins(coins, amount):
    """Fewest coins summing to amount, or -1."""
    raise NotImplementedError
