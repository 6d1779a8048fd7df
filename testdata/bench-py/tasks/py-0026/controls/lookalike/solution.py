# ruff: noqa
def balanced(s):
    """True when (), [] and {} in s are balanced; other characters are ignored."""
    pairs, stack = {')': '(', ']': '[', '}': '{'}, []
    for c in s:
        if c in '([{':
            stack.append(c)
        elif c in pairs and (not stack or stack.pop() != pairs[c]):
            return False
    return True
