def eval_expr(s):
    """Evaluate an integer expression with + - * and parentheses (usual precedence)."""
    raise NotImplementedError
