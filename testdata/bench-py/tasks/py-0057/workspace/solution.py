def luhn(s):
    """True when the digit string s (spaces ignored) passes the Luhn checksum."""
    raise NotImplementedError
