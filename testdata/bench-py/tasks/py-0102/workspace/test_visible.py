from solution import acronym


def test_example():
    assert acronym('portable network graphics') == 'PNG'
