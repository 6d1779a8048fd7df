from solution import top_k_words


def test_example():
    assert top_k_words('b a b c b a', 2) == ['b', 'a']
