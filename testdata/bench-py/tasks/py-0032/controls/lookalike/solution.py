# ruff: noqa
def rpn(tokens):
    """Evaluate integer reverse Polish notation (+ - * /, division truncates to zero)."""
    st = []
    for t in tokens:
        if t in '+-*/' and len(t) == 1:
            b, a = st.pop(), st.pop()
            st.append(a + b if t == '+' else a - b if t == '-' else a * b if t == '*' else a // b)
        else:
            st.append(int(t))
    return st[-1]
