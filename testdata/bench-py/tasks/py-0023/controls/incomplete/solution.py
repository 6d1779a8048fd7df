# ruff: noqa
def anagrams(a, b):
    """True when a and b are anagrams, ignoring case and non-alphanumerics."""
    return sorted(a.lower()) == sorted(b.lower())
