from solution import rpn


def test_example():
    assert rpn(['2', '3', '+']) == 5
