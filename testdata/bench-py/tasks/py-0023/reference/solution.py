# ruff: noqa
def anagrams(a, b):
    """True when a and b are anagrams, ignoring case and non-alphanumerics."""
    def key(s):
        return sorted(c for c in s.lower() if c.isalnum())
    return key(a) == key(b)
