# ruff: noqa
def title_case(s):
    """Upper-case the first character of each space-separated word and lower-case the rest; keep the spaces."""
    return ' '.join(w[:1].upper() + w[1:].lower() for w in s.split(' '))
