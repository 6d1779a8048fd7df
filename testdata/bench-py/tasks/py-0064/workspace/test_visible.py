from solution import unique_paths


def test_example():
    assert unique_paths([[0, 0], [0, 0]]) == 2
