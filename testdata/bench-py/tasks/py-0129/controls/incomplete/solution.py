# ruff: noqa
def valid_email(s):
    """True for a simple e-mail address: one '@', a non-empty local part, a domain with a dot inside."""
    if '@' not in s:
        return False
    local, dom = s.split('@', 1)
    return bool(local) and '.' in dom[1:-1] and not dom.startswith('.') and not dom.endswith('.')
