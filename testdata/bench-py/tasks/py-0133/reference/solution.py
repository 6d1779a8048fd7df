# ruff: noqa
def parse_bool(s):
    """Parse 'true/yes/on/1' -> True and 'false/no/off/0' -> False (any case, spaces trimmed); else None."""
    t = s.strip().lower()
    return True if t in ('true', 'yes', 'on', '1') else False if t in ('false', 'no', 'off', '0') else None
