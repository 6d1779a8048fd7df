def lru_misses(capacity, accesses):
    """Cache misses of an LRU cache of the given capacity."""
    raise NotImplementedError
