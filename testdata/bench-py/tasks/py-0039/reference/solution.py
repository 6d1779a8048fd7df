# ruff: noqa
def lru_misses(capacity, accesses):
    """Cache misses of an LRU cache of the given capacity."""
    cache, misses = [], 0
    for a in accesses:
        if a in cache:
            cache.remove(a)
        else:
            misses += 1
            if len(cache) == capacity:
                cache.pop(0)
        cache.append(a)
    return misses
