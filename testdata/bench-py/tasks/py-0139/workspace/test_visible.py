from solution import decode_ways


def test_example():
    assert decode_ways('12') == 2
