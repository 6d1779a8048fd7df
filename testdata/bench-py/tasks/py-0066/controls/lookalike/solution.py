def parse_csv_line(line):
    """Split one CSV line on commas; fields may be double-quoted (they may then contain commas, and a doubled quote stands for one quote)."""
    return [f.strip('"') for f in line.split(',')]
