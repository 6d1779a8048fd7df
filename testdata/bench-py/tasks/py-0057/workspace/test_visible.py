from solution import luhn


def test_example():
    assert luhn('4539148803436467') is True
