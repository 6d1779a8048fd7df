from solution import count_char


def test_example():
    assert count_char('banana', 'a') == 3
