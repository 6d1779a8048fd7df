# ruff: noqa
def word_count(text):
    """Count words (split on whitespace, lower-cased, stripped of .,!?;:) into a dict."""
    out = {}
    for w in text.lower().split():
        w = w.strip('.,!?;:')
        if w:
            out[w] = out.get(w, 0) + 1
    return out
