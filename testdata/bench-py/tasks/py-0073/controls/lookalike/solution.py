# ruff: noqa
def count_char(s, c):
    """Count how often the character c occurs in s (case-sensitive)."""
    return len(s.split(c)) - 1 if s else 1
