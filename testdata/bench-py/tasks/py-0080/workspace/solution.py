def count_positive(xs):
    """Number of elements strictly greater than 0."""
    raise NotImplementedError
