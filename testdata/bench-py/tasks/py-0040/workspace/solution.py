def next_permutation(xs):
    """The next lexicographic permutation of xs (the first one after the last)."""
    raise NotImplementedError
