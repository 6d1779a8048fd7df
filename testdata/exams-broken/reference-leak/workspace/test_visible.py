from solution import fizzbuzz


def test_example():
    assert fizzbuzz(3) == 'Fizz'
