# ruff: noqa
def num_to_words(n):
    """English words for 0 <= n <= 99: 42 -> 'forty-two', 13 -> 'thirteen'."""
    ones = 'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split()
    tens = 'twenty thirty forty fifty sixty seventy eighty ninety'.split()
    if n < 13:
        return ones[n]
    if n < 20:
        return ones[n - 10] + 'teen'
    t, o = divmod(n, 10)
    return tens[t - 2] + ('-' + ones[o] if o else '')
