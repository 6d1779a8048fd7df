from solution import count_substring


def test_example():
    assert count_substring('banana', 'ana') == 2
