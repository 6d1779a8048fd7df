from solution import add


def test_example():
    assert add(1, 2) == 3
