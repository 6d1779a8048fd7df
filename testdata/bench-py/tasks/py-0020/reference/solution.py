# ruff: noqa
def dedupe(xs):
    """Remove duplicates, keeping the first occurrence's order."""
    seen, out = set(), []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
