from solution import course_order_possible


def test_example():
    assert course_order_possible(2, [[1, 0]]) is True
