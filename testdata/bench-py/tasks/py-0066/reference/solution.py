# ruff: noqa
def parse_csv_line(line):
    """Split a CSV line on commas; quoted fields may contain commas, and a doubled quote in one means a quote."""
    fields, cur, quoted, i = [], '', False, 0
    while i < len(line):
        c = line[i]
        if quoted:
            if c == '"' and line[i + 1:i + 2] == '"':
                cur += '"'
                i += 1
            elif c == '"':
                quoted = False
            else:
                cur += c
        elif c == '"':
            quoted = True
        elif c == ',':
            fields.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    return fields + [cur]
