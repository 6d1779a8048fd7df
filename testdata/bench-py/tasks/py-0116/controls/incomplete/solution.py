# ruff: noqa
def bracket_depth(s):
    """Maximum nesting depth of the parentheses in s (s is balanced)."""
    return s.count('(')
