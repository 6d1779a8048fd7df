# ruff: noqa
def title_case(s):
    """Upper-case the first character of each space-separated word and lower-case the rest; keep the spaces."""
    return s.title()
