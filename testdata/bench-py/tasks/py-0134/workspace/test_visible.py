from solution import version_compare


def test_example():
    assert version_compare('1.2', '1.10') == -1
