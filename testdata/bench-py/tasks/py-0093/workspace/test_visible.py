from solution import alternate_case


def test_example():
    assert alternate_case('abcd') == 'AbCd'
