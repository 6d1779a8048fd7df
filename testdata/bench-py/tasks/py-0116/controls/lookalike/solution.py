# ruff: noqa
def bracket_depth(s):
    """Maximum nesting depth of the parentheses in s (s is balanced)."""
    d = best = 0
    for c in s:
        if c == '(':
            d += 1
        elif c == ')':
            best = max(best, d)
            d -= 1
    return best if best > 0 else None
