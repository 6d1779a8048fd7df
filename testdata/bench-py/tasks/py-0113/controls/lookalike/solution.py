# ruff: noqa
def valid_parentheses_count(s):
    """Minimum number of '(' or ')' to add to make s balanced."""
    need = opened = 0
    for c in s:
        if c == '(':
            opened += 1
        elif opened:
            opened -= 1
        else:
            need += 1
    return need
