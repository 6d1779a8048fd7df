# ruff: noqa
def queue_time(customers, tills):
    """Minutes until a queue with these service times is done, served by n tills (first free till next)."""
    t = [0] * tills
    for c in customers:
        t[t.index(min(t))] += c
    return max(t)
