from solution import group_anagrams_count


def test_example():
    assert group_anagrams_count(['eat', 'tea', 'tan']) == 2
