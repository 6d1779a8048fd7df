# ruff: noqa
def longest_word(s):
    """The longest whitespace-separated word of s (the first one on ties); '' if none."""
    return max(s.split(), key=len)
