from solution import swap_case


def test_example():
    assert swap_case('Hello') == 'hELLO'
