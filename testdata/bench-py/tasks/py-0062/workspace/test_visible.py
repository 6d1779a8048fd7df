from solution import normalize_path


def test_example():
    assert normalize_path('/a/./b/') == '/a/b'
