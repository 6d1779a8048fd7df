def course_order_possible(n, prereqs):
    """True when courses 0..n-1 can all be taken given [course, prerequisite] pairs (no cycle)."""
    raise NotImplementedError
