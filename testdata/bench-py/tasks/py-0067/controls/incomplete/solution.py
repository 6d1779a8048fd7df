# ruff: noqa
def eval_expr(s):
    """Evaluate an integer expression with + - * and parentheses (usual precedence)."""
    import re
    toks = re.findall(r'\d+|[-+*()]', s)
    pos = 0
    def peek():
        return toks[pos] if pos < len(toks) else None
    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]
    def term():
        v = int(take())
        while peek() == '*':
            take()
            v *= int(take())
        return v
    def expr():
        v = term()
        while peek() in ('+', '-'):
            v = v + term() if take() == '+' else v - term()
        return v
    return expr()
