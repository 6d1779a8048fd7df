# ruff: noqa
def dedupe(xs):
    """Remove duplicates, keeping the first occurrence's order."""
    return sorted(set(xs))
