# ruff: noqa
def fibonacci(n):
    """Return the n-th Fibonacci number (fibonacci(0) == 0, fibonacci(1) == 1)."""
    phi = (1 + 5 ** 0.5) / 2
    return round(phi ** n / 5 ** 0.5)
