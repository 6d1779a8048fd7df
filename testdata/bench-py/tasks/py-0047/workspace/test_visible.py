from solution import hamming


def test_example():
    assert hamming('karolin', 'kathrin') == 3
