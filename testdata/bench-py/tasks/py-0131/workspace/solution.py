def num_to_words(n):
    """English words for 0 <= n <= 99: 42 -> 'forty-two', 13 -> 'thirteen'."""
    raise NotImplementedError
