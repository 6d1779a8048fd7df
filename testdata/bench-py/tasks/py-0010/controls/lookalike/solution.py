# ruff: noqa
def is_palindrome(s):
    """Return True when s reads the same backwards, considering only letters and digits, ignoring case."""
    t = [c for c in s if c.isalnum()]
    return t == t[::-1]
