from solution import word_break


def test_example():
    assert word_break('leetcode', ['leet', 'code']) is True
