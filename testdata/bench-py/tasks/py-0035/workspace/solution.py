def word_break(s, words):
    """True when s splits into a sequence of words from the list."""
    raise NotImplementedError
