# ruff: noqa
def compress_ranges(xs):
    """Sorted distinct ints as ranges: runs of two or more consecutive numbers as 'a-b', joined by ','."""
    parts, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(f'{xs[i]}-{xs[j]}' if j > i else str(xs[i]))
        i = j + 1
    return ','.join(parts)
