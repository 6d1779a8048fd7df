# ruff: noqa
def count_words(s):
    """Number of words in s (words are separated by any whitespace)."""
    return len([w for w in s.split(' ') if w])
