from solution import count_vowels


def test_example():
    assert count_vowels('hello') == 2
