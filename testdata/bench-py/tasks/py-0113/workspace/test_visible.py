from solution import valid_parentheses_count


def test_example():
    assert valid_parentheses_count('())') == 1
