def reverse_string(s):
    """Return s reversed."""
    raise NotImplementedError
