# ruff: noqa
def average_word_length(s):
    """Mean length of the whitespace-separated words of s (0.0 if none)."""
    w = s.split()
    return sum(map(len, w)) / len(w)
