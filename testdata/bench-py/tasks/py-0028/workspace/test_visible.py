from solution import lcp


def test_example():
    assert lcp(['flower', 'flow']) == 'flow'
