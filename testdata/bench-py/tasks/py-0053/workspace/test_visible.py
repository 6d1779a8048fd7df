from solution import ordinal


def test_example():
    assert ordinal(2) == '2nd'
