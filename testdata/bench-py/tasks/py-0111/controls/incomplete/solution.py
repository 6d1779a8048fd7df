# ruff: noqa
def zip_dict(keys, values):
    """A dict pairing keys with values; missing values are None, extra values ignored."""
    return dict(zip(keys, values))
