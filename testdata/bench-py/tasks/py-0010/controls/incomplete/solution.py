# ruff: noqa
def is_palindrome(s):
    """Return True when s reads the same backwards, considering only letters and digits, ignoring case."""
    t = s.lower()
    return t == t[::-1]
