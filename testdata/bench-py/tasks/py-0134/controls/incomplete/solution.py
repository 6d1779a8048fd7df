# ruff: noqa
def version_compare(a, b):
    """Compare dotted versions: -1, 0 or 1 ('1.10' > '1.9'; missing parts are 0)."""
    pa, pb = [int(x) for x in a.split('.')], [int(x) for x in b.split('.')]
    return (pa > pb) - (pa < pb)
