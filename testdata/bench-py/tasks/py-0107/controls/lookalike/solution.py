# ruff: noqa
def reverse_words(s):
    """Reverse the order of the whitespace-separated words, joined by single spaces."""
    return ' '.join(w[::-1] for w in s.split())
