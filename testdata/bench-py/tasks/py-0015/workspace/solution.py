def word_count(text):
    """Count words (split on whitespace, lower-cased, stripped of .,!?;:) into a dict."""
    raise NotImplementedError
