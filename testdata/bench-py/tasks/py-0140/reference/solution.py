# ruff: noqa
def trap_water(heights):
    """Units of rain water trapped between the bars of the height map."""
    total = 0
    for i, h in enumerate(heights):
        total += max(0, min(max(heights[:i + 1]), max(heights[i:])) - h)
    return total
