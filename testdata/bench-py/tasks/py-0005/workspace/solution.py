def count_vowels(s):
    """Count the vowels a, e, i, o, u in s, ignoring case."""
    raise NotImplementedError
