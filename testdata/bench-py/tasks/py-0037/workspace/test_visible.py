from solution import dijkstra


def test_example():
    assert dijkstra(2, [[0, 1, 4]], 0) == [0, 4]
