def to_base(n, b):
    """n written in base b (2..36) with digits 0-9a-z, '-' for negatives, '0' for 0."""
    raise NotImplementedError
