# ruff: noqa
def lru_misses(capacity, accesses):
    """Cache misses of an LRU cache of the given capacity."""
    cache, misses = [], 0
    for a in accesses:
        if a in cache:
            cache.remove(a)
        else:
            misses += 1
        cache.append(a)
        if len(cache) > capacity + 1:
            cache.pop(0)
    return misses
