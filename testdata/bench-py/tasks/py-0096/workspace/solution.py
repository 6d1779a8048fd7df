def running_max(xs):
    """The running maximum of xs: out[i] = max(xs[:i + 1])."""
    raise NotImplementedError
