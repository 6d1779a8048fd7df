# ruff: noqa
def valid_ipv4(s):
    """True when s is a dotted-quad IPv4 address: four decimal parts 0..255, no leading zeros."""
    parts = s.split('.')
    if len(parts) != 4:
        return False
    try:
        return all(0 <= int(p) <= 255 for p in parts)
    except ValueError:
        return False
