# ruff: noqa
def wrap_text(s, width):
    """Greedy word wrap of s into lines of at most width characters (long words alone)."""
    lines, cur = [], ''
    for w in s.split():
        if cur and len(cur) + 1 + len(w) <= width:
            cur += ' ' + w
        else:
            if cur:
                lines.append(cur)
            cur = w
    if cur:
        lines.append(cur)
    return lines
