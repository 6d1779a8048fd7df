def factorial(n):
    """Return n! for n >= 0."""
    raise NotImplementedError
