# ruff: noqa
def initials(name):
    """Initials of a full name, upper-case and dotted: 'ada lovelace' -> 'A.L.'."""
    return ''.join(w[0].upper() + '.' for w in name.split(' ') if w)[:4]
