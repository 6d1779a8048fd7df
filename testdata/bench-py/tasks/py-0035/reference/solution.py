# ruff: noqa
def word_break(s, words):
    """True when s splits into a sequence of words from the list."""
    ok = [True] + [False] * len(s)
    for i in range(1, len(s) + 1):
        ok[i] = any(ok[j] and s[j:i] in words for j in range(i))
    return ok[-1]
