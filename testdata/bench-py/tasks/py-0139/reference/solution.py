# ruff: noqa
def decode_ways(s):
    """Ways to decode a digit string with 'A'=1 ... 'Z'=26 ('12' -> 2)."""
    if not s:
        return 0
    prev, cur = 1, int(s[0] != '0')
    for i in range(1, len(s)):
        nxt = cur if s[i] != '0' else 0
        if 10 <= int(s[i - 1:i + 1]) <= 26:
            nxt += prev
        prev, cur = cur, nxt
    return cur
