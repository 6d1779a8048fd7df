# ruff: noqa
def roman_to_int(s):
    """Convert a Roman numeral to an int."""
    vals = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}
    return sum(vals[c] for c in s)
