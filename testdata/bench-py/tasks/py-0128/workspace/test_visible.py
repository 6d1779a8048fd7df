from solution import first_unique_char


def test_example():
    assert first_unique_char('leetcode') == 0
