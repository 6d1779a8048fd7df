from solution import is_anagram


def test_example():
    assert is_anagram('listen', 'silent') is True
