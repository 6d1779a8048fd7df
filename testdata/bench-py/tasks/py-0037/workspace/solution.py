def dijkstra(n, edges, src):
    """Shortest distances from src over directed weighted edges [a, b, w]; -1 when unreachable."""
    raise NotImplementedError
