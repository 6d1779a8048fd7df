# ruff: noqa
def top_k_words(text, k):
    """The k most frequent words of text (lower-cased, split on whitespace), most frequent first, ties alphabetical."""
    counts = {}
    for w in text.lower().split():
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))[:k]
