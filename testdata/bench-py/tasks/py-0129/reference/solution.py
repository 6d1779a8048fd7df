# ruff: noqa
def valid_email(s):
    """True for a simple e-mail address: one '@', a non-empty local part, a domain with a dot inside."""
    if s.count('@') != 1:
        return False
    local, dom = s.split('@')
    return bool(local) and '.' in dom[1:-1] and not dom.startswith('.') and not dom.endswith('.')
