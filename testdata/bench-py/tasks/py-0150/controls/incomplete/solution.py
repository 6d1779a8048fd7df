# ruff: noqa
def edit_script_len(a, b):
    """Fewest single-character insertions or deletions turning a into b (no substitutions)."""
    return sum(x != y for x, y in zip(a, b)) * 2 + abs(len(a) - len(b))
