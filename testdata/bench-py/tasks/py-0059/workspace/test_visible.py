from solution import valid_ipv4


def test_example():
    assert valid_ipv4('192.168.0.1') is True
