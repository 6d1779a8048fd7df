# ruff: noqa
def vowel_ratio(s):
    """Fraction of the letters of s that are vowels (a, e, i, o, u, any case); 0.0 if no letters."""
    return sum(c in 'aeiouAEIOU' for c in s) / len(s) if s else 0.0
