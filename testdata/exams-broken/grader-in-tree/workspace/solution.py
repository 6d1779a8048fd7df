def fizzbuzz(n):
    """Return 'Fizz' for multiples of 3, 'Buzz' for 5, 'FizzBuzz' for 15, else str(n)."""
    raise NotImplementedError
