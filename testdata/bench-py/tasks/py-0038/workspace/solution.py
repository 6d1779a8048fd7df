def parse_duration(s):
    """Seconds in a duration like '1h30m' or '45s' (h, m, s units)."""
    raise NotImplementedError
