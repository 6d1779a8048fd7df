# ruff: noqa
def count_islands(grid):
    """Number of islands of 1s in a grid, connected horizontally or vertically."""
    seen, count = set(), 0
    for r in range(len(grid)):
        for c in range(len(grid[r])):
            if grid[r][c] and (r, c) not in seen:
                count += 1
                stack = [(r, c)]
                while stack:
                    y, x = stack.pop()
                    if (y, x) in seen or not (0 <= y < len(grid) and 0 <= x < len(grid[y])) or not grid[y][x]:
                        continue
                    seen.add((y, x))
                    stack += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]
    return count
