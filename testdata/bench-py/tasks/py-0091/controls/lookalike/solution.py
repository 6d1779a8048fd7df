# ruff: noqa
def vowel_positions(s):
    """Indices of the vowels (a, e, i, o, u, any case) in s."""
    return [i + 1 for i, c in enumerate(s) if c.lower() in 'aeiou']
