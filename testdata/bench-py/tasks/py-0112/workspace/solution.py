def group_by_length(words):
    """A dict from word length to the words of that length, in input order."""
    raise NotImplementedError
