# ruff: noqa
def wrap_text(s, width):
    """Greedy word wrap of s into lines of at most width characters (long words alone)."""
    import textwrap
    return textwrap.wrap(s, width)
