# ruff: noqa
def edit_script_len(a, b):
    """Fewest single-character insertions or deletions turning a into b (no substitutions)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return max(len(a), len(b)) - prev[-1]
