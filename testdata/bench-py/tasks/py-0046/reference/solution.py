# ruff: noqa
def longest_word(s):
    """The longest whitespace-separated word of s (the first one on ties); '' if none."""
    best = ''
    for w in s.split():
        if len(w) > len(best):
            best = w
    return best
