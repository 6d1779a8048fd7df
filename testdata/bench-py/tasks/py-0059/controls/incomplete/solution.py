# ruff: noqa
def valid_ipv4(s):
    """True when s is a dotted-quad IPv4 address: four decimal parts 0..255, no leading zeros."""
    parts = s.split('.')
    return len(parts) == 4 and all(p.isdigit() and int(p) <= 255 for p in parts)
