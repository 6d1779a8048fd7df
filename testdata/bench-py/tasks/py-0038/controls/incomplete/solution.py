# ruff: noqa
def parse_duration(s):
    """Seconds in a duration like '1h30m' or '45s' (h, m, s units)."""
    units = {'h': 3600, 'm': 60, 's': 1}
    return int(s[:-1]) * units[s[-1]] if s else 0
