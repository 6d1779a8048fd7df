from solution import hex_to_rgb


def test_example():
    assert hex_to_rgb('#ff8800') == [255, 136, 0]
