def absolute(n):
    """Return the absolute value of n."""
    raise NotImplementedError
