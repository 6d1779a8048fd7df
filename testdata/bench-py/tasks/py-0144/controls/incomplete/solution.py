# ruff: noqa
def longest_palindrome_sub(s):
    """Length of the longest palindromic substring of s."""
    best = 0
    for c in range(len(s)):
        r = 0
        while c - r >= 0 and c + r < len(s) and s[c - r] == s[c + r]:
            r += 1
        best = max(best, 2 * r - 1)
    return best
