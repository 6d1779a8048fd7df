# ruff: noqa
def longest_palindrome_sub(s):
    """Length of the longest palindromic substring of s."""
    best = 0
    for i in range(len(s)):
        for j in range(i + 1, len(s) + 1):
            if s[i:j] == s[i:j][::-1]:
                best = max(best, j - i)
    return best if best < len(s) else best - 1
