# ruff: noqa
def vowel_ratio(s):
    """Fraction of the letters of s that are vowels (a, e, i, o, u, any case); 0.0 if no letters."""
    letters = [c for c in s if c.isalpha()]
    return sum(c in 'aeiou' for c in letters) / len(letters) if letters else 0.0
