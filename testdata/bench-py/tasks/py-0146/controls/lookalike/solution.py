# ruff: noqa
def course_order_possible(n, prereqs):
    """True when courses 0..n-1 can all be taken given [course, prerequisite] pairs (no cycle)."""
    return all(c != p for c, p in prereqs)
