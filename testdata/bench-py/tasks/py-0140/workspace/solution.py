def trap_water(heights):
    """Units of rain water trapped between the bars of the height map."""
    raise NotImplementedError
