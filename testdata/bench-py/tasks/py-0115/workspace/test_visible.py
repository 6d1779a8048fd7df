from solution import wrap_text


def test_example():
    assert wrap_text('the quick brown fox', 10) == ['the quick', 'brown fox']
