def compress_ranges(xs):
    """Sorted distinct ints as ranges: runs of two or more consecutive numbers as 'a-b', joined by ','."""
    raise NotImplementedError
