# ruff: noqa
def roman_valid(s):
    """True when s is a canonical Roman numeral for 1..3999 (upper-case)."""
    import re
    return bool(s) and re.fullmatch(r'M{0,3}(CM|CD|D?C{0,4})(XC|XL|L?X{0,4})(IX|IV|V?I{0,4})', s) is not None
