from solution import vowel_ratio


def test_example():
    assert vowel_ratio('abba') == 0.5
