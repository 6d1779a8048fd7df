from solution import edit_script_len


def test_example():
    assert edit_script_len('abc', 'abd') == 2
