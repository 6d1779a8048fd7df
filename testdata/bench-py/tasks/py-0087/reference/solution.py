# ruff: noqa
def pad_left(s, width, fill):
    """Pad s on the left with the character fill up to width characters."""
    return s.rjust(width, fill)
