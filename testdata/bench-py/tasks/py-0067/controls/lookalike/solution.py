# ruff: noqa
def eval_expr(s):
    """Evaluate an integer expression with + - * and parentheses (usual precedence)."""
    import re
    toks = re.findall(r'\d+|[-+*()]', s)
    pos = 0
    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]
    def atom():
        if toks[pos] == '(':
            take()
            v = expr()
            take()
            return v
        return int(take())
    def expr():
        v = atom()
        while pos < len(toks) and toks[pos] in '+-*':
            op = take()
            w = atom()
            v = v + w if op == '+' else v - w if op == '-' else v * w
        return v
    return expr()
