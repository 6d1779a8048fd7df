# ruff: noqa
def count_vowels(s):
    """Count the vowels a, e, i, o, u in s, ignoring case."""
    return sum(1 for c in s if c in 'aeiou')
