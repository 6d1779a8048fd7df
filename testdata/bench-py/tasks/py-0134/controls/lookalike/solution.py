# ruff: noqa
def version_compare(a, b):
    """Compare dotted versions: -1, 0 or 1 ('1.10' > '1.9'; missing parts are 0)."""
    return (a > b) - (a < b)
