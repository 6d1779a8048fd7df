def starts_with_vowel(s):
    """True when s starts with a vowel (a, e, i, o, u; any case)."""
    raise NotImplementedError
