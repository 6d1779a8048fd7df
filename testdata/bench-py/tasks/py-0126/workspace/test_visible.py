from solution import word_pattern


def test_example():
    assert word_pattern('abba', 'dog cat cat dog') is True
