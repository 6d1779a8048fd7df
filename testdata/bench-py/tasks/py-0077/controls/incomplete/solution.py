# ruff: noqa
def capitalize_words(s):
    """Upper-case the first letter of each space-separated word, keep the rest."""
    return ' '.join(w[:1].upper() + w[1:] for w in s.split())
