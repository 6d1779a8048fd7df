def longest_palindrome_sub(s):
    """Length of the longest palindromic substring of s."""
    raise NotImplementedError
