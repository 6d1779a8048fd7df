def word_pattern(pattern, s):
    """True when the words of s follow pattern one-to-one ('abba', 'dog cat cat dog')."""
    raise NotImplementedError
