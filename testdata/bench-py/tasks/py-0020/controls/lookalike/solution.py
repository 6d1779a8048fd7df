# ruff: noqa
def dedupe(xs):
    """Remove duplicates, keeping the first occurrence's order."""
    return [x for i, x in enumerate(xs) if x not in xs[i + 1:]]
