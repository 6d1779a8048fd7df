def valid_ipv4(s):
    """True when s is a dotted-quad IPv4 address: four decimal parts 0..255, no leading zeros."""
    raise NotImplementedError
