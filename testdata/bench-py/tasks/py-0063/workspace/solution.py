def top_k_words(text, k):
    """The k most frequent words of text (lower-cased, split on whitespace), most frequent first, ties alphabetical."""
    raise NotImplementedError
