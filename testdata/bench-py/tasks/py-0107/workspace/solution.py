def reverse_words(s):
    """Reverse the order of the whitespace-separated words, joined by single spaces."""
    raise NotImplementedError
