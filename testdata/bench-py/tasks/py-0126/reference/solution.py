# ruff: noqa
def word_pattern(pattern, s):
    """True when the words of s follow pattern one-to-one ('abba', 'dog cat cat dog')."""
    w = s.split()
    return len(w) == len(pattern) and len(set(w)) == len(set(pattern)) == len(set(zip(pattern, w)))
