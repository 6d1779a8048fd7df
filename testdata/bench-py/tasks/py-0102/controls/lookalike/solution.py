# ruff: noqa
def acronym(s):
    """Acronym of a phrase: first letters of its words, upper-case; hyphens split words."""
    return ''.join(w[0] for w in s.replace('-', ' ').split())
