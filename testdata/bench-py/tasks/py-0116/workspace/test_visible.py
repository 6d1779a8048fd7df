from solution import bracket_depth


def test_example():
    assert bracket_depth('(a(b))') == 2
