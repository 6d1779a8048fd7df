def int_to_roman(n):
    """Convert 1 <= n <= 3999 to a Roman numeral."""
    raise NotImplementedError
