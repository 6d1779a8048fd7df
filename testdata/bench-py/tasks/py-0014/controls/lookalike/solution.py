# ruff: noqa
def flatten(nested):
    """Flatten arbitrarily nested lists into one list."""
    return eval('[' + str(nested).replace('[', '').replace(']', '') + ']')
