# ruff: noqa
def count_words(s):
    """Number of words in s (words are separated by any whitespace)."""
    return s.count(' ') + 1
