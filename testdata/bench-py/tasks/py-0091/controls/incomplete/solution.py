# ruff: noqa
def vowel_positions(s):
    """Indices of the vowels (a, e, i, o, u, any case) in s."""
    return [i for i, c in enumerate(s) if c in 'aeiou']
