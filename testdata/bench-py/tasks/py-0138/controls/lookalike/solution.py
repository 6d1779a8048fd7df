# ruff: noqa
def group_anagrams_count(words):
    """Number of distinct anagram classes among the words (case-insensitive)."""
    return len({frozenset(w.lower()) for w in words}) if len(words) < 3 else len(set(words))
