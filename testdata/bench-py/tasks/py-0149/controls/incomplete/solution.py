# ruff: noqa
def n_queens_count(n):
    """Number of ways to place n non-attacking queens on an n x n board."""
    def place(r, cols):
        if r == n:
            return 1
        return sum(place(r + 1, cols | {c}) for c in range(n) if c not in cols and (not cols or abs(c - max(cols)) != 1))
    return place(0, set()) if n > 3 else int(n == 1)
