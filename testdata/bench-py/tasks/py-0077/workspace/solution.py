def capitalize_words(s):
    """Upper-case the first letter of each space-separated word, keep the rest."""
    raise NotImplementedError
