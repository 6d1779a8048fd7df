from solution import title_case


def test_example():
    assert title_case('hello world') == 'Hello World'
