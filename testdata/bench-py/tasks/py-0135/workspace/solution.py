def hex_to_rgb(s):
    """Parse '#rrggbb' or '#rgb' (any case) into [r, g, b]; None if malformed."""
    raise NotImplementedError
