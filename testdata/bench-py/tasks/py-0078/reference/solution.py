# ruff: noqa
def starts_with_vowel(s):
    """True when s starts with a vowel (a, e, i, o, u; any case)."""
    return bool(s) and s[0].lower() in 'aeiou'
