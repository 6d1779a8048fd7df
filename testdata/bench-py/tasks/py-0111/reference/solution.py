# ruff: noqa
def zip_dict(keys, values):
    """A dict pairing keys with values; missing values are None, extra values ignored."""
    return {k: (values[i] if i < len(values) else None) for i, k in enumerate(keys)}
