def celsius_to_fahrenheit(c):
    """Convert Celsius to Fahrenheit."""
    raise NotImplementedError
