def fibonacci(n):
    """Return the n-th Fibonacci number (fibonacci(0) == 0, fibonacci(1) == 1)."""
    raise NotImplementedError
