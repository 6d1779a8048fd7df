# ruff: noqa
def next_permutation(xs):
    """The next lexicographic permutation of xs (the first one after the last)."""
    xs = list(xs)
    i = len(xs) - 2
    while i >= 0 and xs[i] > xs[i + 1]:
        i -= 1
    if i < 0:
        return sorted(xs)
    j = len(xs) - 1
    while j > i and xs[j] <= xs[i]:
        j -= 1
    xs[i], xs[j] = xs[j], xs[i]
    xs[i + 1:] = reversed(xs[i + 1:])
    return xs
