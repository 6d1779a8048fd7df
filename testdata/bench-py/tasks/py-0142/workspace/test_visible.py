from solution import simplify_fraction


def test_example():
    assert simplify_fraction(2, 4) == [1, 2]
