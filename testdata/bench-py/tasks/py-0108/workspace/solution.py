def cumulative_sum(xs):
    """Running totals of xs."""
    raise NotImplementedError
