def vowel_ratio(s):
    """Fraction of the letters of s that are vowels (a, e, i, o, u, any case); 0.0 if no letters."""
    raise NotImplementedError
