from solution import vowel_positions


def test_example():
    assert vowel_positions('hello') == [1, 4]
