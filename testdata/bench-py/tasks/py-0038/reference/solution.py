# ruff: noqa
def parse_duration(s):
    """Seconds in a duration like '1h30m' or '45s' (h, m, s units)."""
    import re
    units = {'h': 3600, 'm': 60, 's': 1}
    return sum(int(num) * units[u] for num, u in re.findall(r'(\d+)([hms])', s))
