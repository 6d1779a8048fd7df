from solution import starts_with_vowel


def test_example():
    assert starts_with_vowel('apple') is True
