def decode_ways(s):
    """Ways to decode a digit string with 'A'=1 ... 'Z'=26 ('12' -> 2)."""
    raise NotImplementedError
