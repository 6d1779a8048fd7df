def average_word_length(s):
    """Mean length of the whitespace-separated words of s (0.0 if none)."""
    raise NotImplementedError
