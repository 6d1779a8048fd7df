def longest_word(s):
    """The longest whitespace-separated word of s (the first one on ties); '' if none."""
    raise NotImplementedError
