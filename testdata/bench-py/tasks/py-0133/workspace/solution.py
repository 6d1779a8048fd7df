def parse_bool(s):
    """Parse 'true/yes/on/1' -> True and 'false/no/off/0' -> False (any case, spaces trimmed); else None."""
    raise NotImplementedError
