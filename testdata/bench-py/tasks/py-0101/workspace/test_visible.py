from solution import count_upper


def test_example():
    assert count_upper('Hello World') == 2
