# ruff: noqa
def roman_valid(s):
    """True when s is a canonical Roman numeral for 1..3999 (upper-case)."""
    import re
    return re.fullmatch(r'M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})', s) is not None
