def vowel_positions(s):
    """Indices of the vowels (a, e, i, o, u, any case) in s."""
    raise NotImplementedError
