from solution import sum_multiples


def test_example():
    assert sum_multiples(10) == 23
