# ruff: noqa
def longest_run(xs):
    """Length of the longest run of equal adjacent elements (0 for [])."""
    best = cur = 0
    prev = object()
    for x in xs:
        cur = cur + 1 if x == prev else 1
        prev = x
        best = max(best, cur)
    return best
