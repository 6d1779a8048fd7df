# ruff: noqa
def flatten_dict(d):
    """Flatten nested dicts into one dict with dotted keys ({'a': {'b': 1}} -> {'a.b': 1}); empty dicts vanish."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            for k2, v2 in flatten_dict(v).items():
                out[f'{k}.{k2}'] = v2
        else:
            out[k] = v
    return out
