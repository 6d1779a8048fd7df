from solution import eval_expr


def test_example():
    assert eval_expr('1 + 2') == 3
