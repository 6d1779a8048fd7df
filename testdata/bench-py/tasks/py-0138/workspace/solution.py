def group_anagrams_count(words):
    """Number of distinct anagram classes among the words (case-insensitive)."""
    raise NotImplementedError
