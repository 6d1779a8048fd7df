def valid_parentheses_count(s):
    """Minimum number of '(' or ')' to add to make s balanced."""
    raise NotImplementedError
