# ruff: noqa
def hex_to_rgb(s):
    """Parse '#rrggbb' or '#rgb' (any case) into [r, g, b]; None if malformed."""
    h = s.lstrip('#')
    if len(h) == 3:
        h = ''.join(c * 2 for c in h)
    try:
        return [int(h[i:i + 2], 16) for i in (0, 2, 4)]
    except ValueError:
        return None
