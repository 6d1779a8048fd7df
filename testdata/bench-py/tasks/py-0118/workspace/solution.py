def longest_run(xs):
    """Length of the longest run of equal adjacent elements (0 for [])."""
    raise NotImplementedError
