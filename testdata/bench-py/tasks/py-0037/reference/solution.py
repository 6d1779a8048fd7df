# ruff: noqa
def dijkstra(n, edges, src):
    """Shortest distances from src over directed weighted edges [a, b, w]; -1 when unreachable."""
    import heapq
    adj = {i: [] for i in range(n)}
    for a, b, w in edges:
        adj[a].append((b, w))
    dist = [None] * n
    pq = [(0, src)]
    while pq:
        d, u = heapq.heappop(pq)
        if dist[u] is not None:
            continue
        dist[u] = d
        for v, w in adj[u]:
            if dist[v] is None:
                heapq.heappush(pq, (d + w, v))
    return [-1 if d is None else d for d in dist]
