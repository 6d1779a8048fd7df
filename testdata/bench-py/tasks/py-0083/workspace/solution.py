def initials(name):
    """Initials of a full name, upper-case and dotted: 'ada lovelace' -> 'A.L.'."""
    raise NotImplementedError
