from solution import camel_to_snake


def test_example():
    assert camel_to_snake('helloWorld') == 'hello_world'
