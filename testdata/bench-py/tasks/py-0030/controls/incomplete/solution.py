# ruff: noqa
def lis(xs):
    """Length of the longest strictly increasing subsequence."""
    import bisect
    tails = []
    for x in xs:
        i = bisect.bisect_right(tails, x)
        tails[i:i + 1] = [x]
    return len(tails)
