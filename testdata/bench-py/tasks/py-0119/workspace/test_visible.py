from solution import run_length_decode


def test_example():
    assert run_length_decode('3a2b') == 'aaabb'
