# ruff: noqa
def longest_run(xs):
    """Length of the longest run of equal adjacent elements (0 for [])."""
    best = cur = 1
    for i in range(1, len(xs)):
        cur = cur + 1 if xs[i] == xs[i - 1] else 1
        best = max(best, cur)
    return best
