from solution import pad_left


def test_example():
    assert pad_left('7', 3, '0') == '007'
