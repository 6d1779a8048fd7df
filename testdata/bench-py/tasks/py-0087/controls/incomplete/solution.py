# ruff: noqa
def pad_left(s, width, fill):
    """Pad s on the left with the character fill up to width characters."""
    return fill * (width - len(s)) + s if len(s) < width else s[-width:]
