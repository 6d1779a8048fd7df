# ruff: noqa
def hex_to_rgb(s):
    """Parse '#rrggbb' or '#rgb' (any case) into [r, g, b]; None if malformed."""
    import re
    if not re.fullmatch(r'#[0-9a-fA-F]{6}', s):
        return None
    h = s[1:]
    return [int(h[i:i + 2], 16) for i in (0, 2, 4)]
