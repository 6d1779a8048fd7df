def parse_csv_line(line):
    """Split a CSV line on commas; quoted fields may contain commas, and a doubled quote in one means a quote."""
    raise NotImplementedError
