from solution import edit_distance


def test_example():
    assert edit_distance('kitten', 'sitting') == 3
