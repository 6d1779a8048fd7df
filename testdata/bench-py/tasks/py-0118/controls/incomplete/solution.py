# ruff: noqa
def longest_run(xs):
    """Length of the longest run of equal adjacent elements (0 for [])."""
    best = cur = 0
    for i in range(1, len(xs)):
        if xs[i] == xs[i - 1]:
            cur += 1
        else:
            best = max(best, cur + 1)
            cur = 0
    return best if xs else 0
