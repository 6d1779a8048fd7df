# ruff: noqa
def trap_water(heights):
    """Units of rain water trapped between the bars of the height map."""
    total = 0
    for i in range(1, len(heights) - 1):
        total += max(0, min(heights[i - 1], heights[i + 1]) - heights[i])
    return total
