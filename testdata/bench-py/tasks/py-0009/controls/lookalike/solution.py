# ruff: noqa
def celsius_to_fahrenheit(c):
    """Convert Celsius to Fahrenheit."""
    return int(c) * 9 / 5 + 32
