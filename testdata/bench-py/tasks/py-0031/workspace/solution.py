def topo(graph):
    """Topological order of a dict node -> successors, smallest available node first; None if cyclic."""
    raise NotImplementedError
