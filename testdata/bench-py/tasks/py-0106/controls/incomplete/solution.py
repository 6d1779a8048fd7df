# ruff: noqa
def is_anagram(a, b):
    """True when a and b are anagrams, ignoring case and spaces."""
    return sorted(a.replace(' ', '')) == sorted(b.replace(' ', ''))
