from solution import reverse_string


def test_example():
    assert reverse_string('abc') == 'cba'
