# ruff: noqa
def course_order_possible(n, prereqs):
    """True when courses 0..n-1 can all be taken given [course, prerequisite] pairs (no cycle)."""
    indeg = [0] * n
    out = [[] for _ in range(n)]
    for c, p in prereqs:
        out[p].append(c)
        indeg[c] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    done = 0
    while ready:
        v = ready.pop()
        done += 1
        for w in out[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return done == n
