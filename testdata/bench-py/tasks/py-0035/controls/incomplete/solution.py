# ruff: noqa
def word_break(s, words):
    """True when s splits into a sequence of words from the list."""
    i = 0
    while i < len(s):
        for w in words:
            if s.startswith(w, i):
                i += len(w)
                break
        else:
            return False
    return True
