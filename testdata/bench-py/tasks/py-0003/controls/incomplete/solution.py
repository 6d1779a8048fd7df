# ruff: noqa
def reverse_string(s):
    """Return s reversed."""
    return s[-1] + s[-2::-1]
