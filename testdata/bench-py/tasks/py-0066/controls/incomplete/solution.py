def parse_csv_line(line):
    """Split one CSV line on commas; fields may be double-quoted (they may then contain commas, and a doubled quote stands for one quote)."""
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
