from calc.ops import clamp, first_even, total, words


def test_clamp():
    assert clamp(5, 1, 10) == 5
    assert clamp(0, 1, 10) == 1
    assert clamp(11, 1, 10) == 10
    assert clamp(1, 1, 10) == 1


def test_words():
    assert words("  Hello World ") == ["hello", "world"]


def test_total():
    assert total([10, 20, 30]) == 60
    assert total([100], 10) == 90


def test_first_even():
    assert first_even([1, 3, 4, 6]) == 4
    assert first_even([0, 1, 8]) == 8
    assert first_even([1, 3]) is None
