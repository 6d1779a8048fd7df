from solution import rle


def test_example():
    assert rle('aaab') == '3a1b'
