# ruff: noqa
def compress_ranges(xs):
    """Sorted distinct ints as ranges: runs of two or more consecutive numbers as 'a-b', joined by ','."""
    parts, start, prev = [], xs[0], xs[0]
    for x in xs[1:] + [None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        parts.append(f'{start}-{prev}' if prev > start else str(start))
        start = prev = x
    return ','.join(parts)
