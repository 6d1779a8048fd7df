# ruff: noqa
def group_anagrams_count(words):
    """Number of distinct anagram classes among the words (case-insensitive)."""
    return len({''.join(sorted(w)) for w in words})
