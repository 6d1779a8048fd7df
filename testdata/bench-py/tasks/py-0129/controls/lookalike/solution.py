# ruff: noqa
def valid_email(s):
    """True for a simple e-mail address: one '@', a non-empty local part, a domain with a dot inside."""
    return s.count('@') == 1 and '.' in s.split('@')[1] and not s.startswith('@')
