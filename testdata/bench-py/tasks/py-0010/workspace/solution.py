def is_palindrome(s):
    """Return True when s reads the same backwards, considering only letters and digits, ignoring case."""
    raise NotImplementedError
