from solution import bit_count


def test_example():
    assert bit_count(5) == 2
