from solution import anagrams


def test_example():
    assert anagrams('listen', 'silent') is True
