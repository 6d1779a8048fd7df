def rpn(tokens):
    """Evaluate integer reverse Polish notation (+ - * /, division truncates to zero)."""
    raise NotImplementedError
