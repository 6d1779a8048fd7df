# ruff: noqa
def n_queens_count(n):
    """Number of ways to place n non-attacking queens on an n x n board."""
    def place(r, cols, d1, d2):
        if r == n:
            return 1
        return sum(place(r + 1, cols | {c}, d1 | {r - c}, d2 | {r + c}) for c in range(n)
                   if c not in cols and r - c not in d1 and r + c not in d2)
    return place(0, set(), set(), set())
