def parse_csv_line(line):
    """Split one CSV line on commas; fields may be double-quoted (they may then contain commas, and a doubled quote stands for one quote)."""
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
