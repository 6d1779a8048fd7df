def valid_email(s):
    """True for a simple e-mail address: one '@', a non-empty local part, a domain with a dot inside."""
    raise NotImplementedError
